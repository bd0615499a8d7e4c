"""Example outside package: a `quiz` place for persona-journey and its scripted rule.

Each module is named by an entry point (pyproject.toml), so personasim imports it only when a
run names the `quiz` place, or when the scripted double meets the `quiz.answer` task.
"""
