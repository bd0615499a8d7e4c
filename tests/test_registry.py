"""The one registry (simulation/base/registry.py) and the five registries built on it.

Entry points come from a real distribution's metadata: a `*.dist-info` folder with
`entry_points.txt` on sys.path, beside the modules it names, as pip would install them.
"""

from __future__ import annotations

import importlib
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from personasim.simulation import ScenarioError, get_scenario
from personasim.simulation.base.registry import (
    SCENARIO_FILE_MODULE_PREFIX,
    Origin,
    Registry,
    RegistryError,
    origin_of,
)

GROUP = "personasim_test.things"
MODULES = ("things", "plug_a", "plug_b", "pack", "empty", "reloaded", "holder", "plug_s")


def rule_one() -> int:
    return 1


def rule_two() -> int:
    return 2


def write_modules(root: Path, modules: dict[str, str]) -> None:
    for name, source in modules.items():
        (root / f"{name}.py").write_text(textwrap.dedent(source))


@pytest.fixture
def site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """An installed distribution `fake-things 0.1` whose entry points under GROUP are
    `a` (registers "a"), `b` (registers "b"), `pack` (registers "x" and "y"), `empty`
    (registers nothing) and `broken` (a module that does not exist); `things` holds the
    registry they register into."""
    info = tmp_path / "fake_things-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: fake-things\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(
        f"[{GROUP}]\na = plug_a\nb = plug_b\npack = pack\nempty = empty\nbroken = no_such_module\n"
    )
    write_modules(
        tmp_path,
        {
            "things": f"""
                from personasim.simulation.base.registry import Registry
                THINGS = Registry("thing", {GROUP!r})
            """,
            "plug_a": "from things import THINGS\nTHINGS.register('a', 'A', None)\n",
            "plug_b": "from things import THINGS\nTHINGS.register('b', 'B', None)\n",
            "pack": """
                from things import THINGS
                def x(): ...
                def y(): ...
                THINGS.register("x", x)
                THINGS.register("y", y)
            """,
            "empty": "",
        },
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    yield tmp_path
    for name in MODULES:
        sys.modules.pop(name, None)


def things() -> Registry[object]:
    return importlib.import_module("things").THINGS


# --- registering ----------------------------------------------------------------------------


def test_a_second_value_under_a_name_is_refused_naming_both_origins() -> None:
    registry: Registry[object] = Registry("thing")
    registry.register("one", rule_one)
    with pytest.raises(RegistryError) as refused:
        registry.register("one", rule_two)
    message = str(refused.value)
    assert message.startswith("two things are named 'one': ")
    assert f"{__name__}.rule_one and {__name__}.rule_two" in message
    assert registry.get("one") is rule_one  # the first stays


def test_the_same_value_again_is_no_clash() -> None:
    registry: Registry[object] = Registry("thing")
    assert registry.register("one", rule_one) is rule_one
    assert registry.register("one", rule_one) is rule_one
    assert registry.registered() == {"one": rule_one}


def test_a_reloaded_module_replaces_its_own_definition(site: Path) -> None:
    source = "from things import THINGS\ndef rule(): ...\nTHINGS.register('r', rule)\n"
    write_modules(site, {"reloaded": source})
    module = importlib.import_module("reloaded")
    first = things().get("r")
    assert first is module.rule
    importlib.reload(module)  # a new function object with the same module and name
    assert things().get("r") is module.rule and module.rule is not first


def test_an_explicit_origin_is_what_the_message_names() -> None:
    registry: Registry[object] = Registry("format", error=ScenarioError)
    registry.register("f", object(), Origin("pkg.one", "build"))
    with pytest.raises(ScenarioError, match=r"two formats are named 'f': pkg\.one\.build and "):
        registry.register("f", object(), Origin("pkg.two", "build"))


def test_a_later_scenario_files_definition_replaces_an_earlier_files() -> None:
    """Two copies of a scaffold loaded in one process, or a script imported by hand and then a
    scenario file: the file loaded last is the one meant; it may not take a built-in's name."""
    registry: Registry[object] = Registry("rule", error=ScenarioError)
    first, second = object(), object()
    registry.register("r", first, Origin(f"{SCENARIO_FILE_MODULE_PREFIX}aaaa", "rule", "/a.py"))
    registry.register("r", second, Origin(f"{SCENARIO_FILE_MODULE_PREFIX}bbbb", "rule", "/b.py"))
    assert registry.get("r") is second
    registry.register("s", first, Origin("coin_guess", "rule", "/examples/coin_guess.py"))
    registry.register("s", second, Origin(f"{SCENARIO_FILE_MODULE_PREFIX}dddd", "rule", "/c.py"))
    assert registry.get("s") is second
    registry.register("t", object(), Origin("personasim.scenarios.trust.scripted", "rule"))
    with pytest.raises(ScenarioError, match="two rules are named 't'"):
        registry.register("t", object(), Origin(f"{SCENARIO_FILE_MODULE_PREFIX}cccc", "rule"))


def test_an_instance_has_its_class_as_origin() -> None:
    origin = origin_of(Registry("thing"))
    assert (origin.module, origin.qualname) == ("personasim.simulation.base.registry", "Registry")
    assert origin.file is not None and origin.file.endswith("registry.py")


# --- entry points ---------------------------------------------------------------------------


def test_entry_points_are_listed_without_importing_them(site: Path) -> None:
    assert things().entry_points() == {
        "a": "plug_a",
        "b": "plug_b",
        "pack": "pack",
        "empty": "empty",
        "broken": "no_such_module",
    }
    assert not {"plug_a", "plug_b", "pack"} & set(sys.modules)


def test_a_missing_name_loads_its_own_entry_point_only(site: Path) -> None:
    registry = things()
    assert registry.get("a") == "A"
    assert "plug_a" in sys.modules and "plug_b" not in sys.modules and "pack" not in sys.modules
    assert registry.failures() == {}


def test_a_name_from_a_package_of_values_loads_the_whole_group(site: Path) -> None:
    registry = things()
    x = registry.get("x")  # no entry point is named x: the group is read
    assert x is not None and x.__module__ == "pack"
    assert {"plug_a", "plug_b", "pack"} <= set(sys.modules)
    assert registry.get("nothing") is None
    failed = registry.failures()
    assert list(failed) == ["broken = no_such_module"]
    assert failed["broken = no_such_module"].startswith(
        "failed (distribution fake-things 0.1): ModuleNotFoundError: No module named"
    )
    note = registry.failure_note()
    assert note.startswith("; entry point broken = no_such_module failed (distribution fake-")


def test_a_registry_whose_entry_points_are_its_names_reads_no_more(site: Path) -> None:
    registry: Registry[object] = Registry("thing", GROUP, whole_group=False)
    assert registry.get("x") is None
    assert "pack" not in sys.modules and "plug_a" not in sys.modules


def test_an_entry_point_that_registers_nothing_under_its_name_is_named(site: Path) -> None:
    registry = things()
    assert registry.get("empty") is None
    assert registry.failures("empty") == {"empty = empty": "registered no thing 'empty'"}


def test_a_failing_entry_point_is_named_where_its_name_is_asked_for(site: Path) -> None:
    registry = things()
    assert registry.get("broken") is None
    assert list(registry.failures("broken")) == ["broken = no_such_module"]


def test_the_full_list_loads_every_entry_point_and_a_failure_is_an_error(site: Path) -> None:
    registry = things()
    with pytest.raises(RegistryError) as failed:
        registry.names()
    message = str(failed.value)
    assert message.startswith(
        f"thing entry point broken = no_such_module under {GROUP!r} failed "
        "(distribution fake-things 0.1): ModuleNotFoundError"
    )
    assert registry.names(strict=False) == ["a", "b", "x", "y"]
    assert list(registry.items(strict=False)) == ["a", "b", "x", "y"]


def test_an_entry_point_is_loaded_once(site: Path) -> None:
    registry = things()
    registry.get("a")
    registry.unregister("a")
    assert registry.get("a") is None  # plug_a is not imported again
    assert registry.failures("a") == {"a = plug_a": "registered no thing 'a'"}


def test_built_in_entry_points_are_left_unloaded_when_asked(site: Path) -> None:
    """personasim's own papers are entry points too; `personasim list` cards them without
    importing them (`items(builtin=False)`), and a name still loads its own entry point."""
    registry = things()
    registry.builtin_prefix = "plug_"  # here `a` and `b` stand for the built-in ones
    listed = registry.items(builtin=False, strict=False)
    assert "a" not in listed and "plug_a" not in sys.modules and "plug_b" not in sys.modules
    assert {"x", "y"} <= set(listed)
    assert registry.get("a") == "A" and "plug_b" not in sys.modules
    assert registry.names(strict=False) == ["a", "b", "x", "y"]


# --- snapshot and restore -------------------------------------------------------------------


def test_snapshot_and_restore_put_back_values_and_loaded_entry_points(site: Path) -> None:
    registry = things()
    registry.register("kept", rule_one)
    state = registry.snapshot()
    registry.register("added", rule_two)
    registry.unregister("kept")
    assert registry.get("a") == "A"
    registry.restore(state)
    assert registry.registered() == {"kept": rule_one}
    with registry.scoped():
        registry.register("inside", rule_two)
        assert "inside" in registry
    assert "inside" not in registry and "kept" in registry
    del sys.modules["plug_a"]
    assert registry.get("a") == "A"  # not marked loaded after the restore: loaded again


# --- the five registries refuse a duplicate -------------------------------------------------


def test_a_second_scenario_under_a_name_is_refused() -> None:
    from personasim.simulation.core.scenario import SCENARIOS, register_scenario

    classroom = get_scenario("classroom")
    other = type("OtherClassroom", (classroom,), {"name": "classroom"})
    with SCENARIOS.scoped(), pytest.raises(ScenarioError) as refused:
        register_scenario(other)
    assert "two scenarios are named 'classroom': " in str(refused.value)
    assert "scenarios.classroom.scenario.ClassroomScenario and " in str(refused.value)
    assert str(refused.value).endswith("OtherClassroom; rename one")
    assert get_scenario("classroom") is classroom


def test_a_second_backend_kind_under_a_name_is_refused() -> None:
    import personasim.simulation.llm.backend_kinds  # noqa: F401 - registers the built-in kinds
    from personasim.simulation.llm.backend_kind import (
        KINDS,
        BackendKind,
        ModelSpecError,
        backend_kind,
    )

    class OtherScripted(BackendKind):
        usage = "scripted"

    with KINDS.scoped(), pytest.raises(ModelSpecError) as refused:
        backend_kind("scripted")(OtherScripted)
    assert "two backend kinds are named 'scripted': " in str(refused.value)
    assert "llm.backend_kinds.ScriptedKind and " in str(refused.value)
    assert type(KINDS.get("scripted")).__name__ == "ScriptedKind"


def test_a_second_scripted_rule_for_a_task_is_refused() -> None:
    import personasim.scenarios.trust.scripted  # noqa: F401 - registers trust.trustor
    from personasim.simulation.llm.scripted import RULES, scripted_behaviour

    before = RULES.get("trust.trustor")
    with RULES.scoped(), pytest.raises(RegistryError) as refused:
        scripted_behaviour("trust.trustor")(lambda request, rng: "I send 5 dollars.")
    assert "two scripted rules are named 'trust.trustor': personasim.scenarios.trust" in str(
        refused.value
    )
    assert RULES.get("trust.trustor") is before


def test_a_second_journey_place_under_a_name_is_refused() -> None:
    from personasim.scenarios.persona_journey.places import (
        PLACE_REGISTRY,
        JourneyPlace,
        TrustPlace,
        get_journey_place,
        journey_place,
    )

    class OtherTrust(JourneyPlace):
        def build(self, sim): ...  # type: ignore[no-untyped-def]
        async def visit(self, traveller): ...  # type: ignore[no-untyped-def]

    with PLACE_REGISTRY.scoped(), pytest.raises(ScenarioError) as refused:
        journey_place("trust")(OtherTrust)
    assert "two journey places are named 'trust': " in str(refused.value)
    assert "places.TrustPlace and " in str(refused.value)
    assert get_journey_place("trust") is TrustPlace and OtherTrust.name == ""


def test_a_second_import_format_under_a_name_is_refused() -> None:
    from personasim.simulation.runs.tools.importers import (
        IMPORT_FORMATS,
        ImportFormat,
        get_import_format,
        import_format,
        register_import_format,
    )

    get_scenario("career-chat")  # its package registers its format
    released = get_import_format("career-chat", "model-behavior-adaption")
    with IMPORT_FORMATS.scoped():
        with pytest.raises(ScenarioError) as refused:
            register_import_format(
                ImportFormat("career-chat", "model-behavior-adaption", "?", {}, rule_one)  # type: ignore[arg-type]
            )
        assert "two import formats are named 'career-chat/model-behavior-adaption': " in str(
            refused.value
        )
        assert f"career_chat.importer._build and {__name__}.rule_one" in str(refused.value)

        @import_format("career-chat", "test-format", "a format of this test", {"x": "a file"})
        def build(files, options):  # type: ignore[no-untyped-def]
            raise AssertionError("not called")

        assert get_import_format("career-chat", "test-format").build is build
    assert get_import_format("career-chat", "model-behavior-adaption") is released
    with pytest.raises(ScenarioError, match="no import format 'test-format' for career-chat"):
        get_import_format("career-chat", "test-format")


def test_a_backend_kind_whose_entry_point_fails_is_named_with_its_distribution(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from personasim.simulation.llm.backend_kind import KINDS, ModelSpecError
    from personasim.simulation.llm.model_spec import parse_model_spec

    info = tmp_path / "bad_kind-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: bad-kind\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text("[personasim.backends]\nbad = no_such_module\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    expected = (
        r"backend kind 'bad': entry point bad = no_such_module under 'personasim\.backends' "
        r"failed \(distribution bad-kind 0\.1\): ModuleNotFoundError"
    )
    with KINDS.scoped(), pytest.raises(ModelSpecError, match=expected):
        parse_model_spec("bad:x")
