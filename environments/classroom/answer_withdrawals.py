"""What takes a reply's result back after its last statement (docs/classroom.md, "Reading
answers", rule 10): "this doesn't make sense", "cannot be determined", "I'm not sure", "let me
reconsider", "das ist falsch", "无法确定"… A reply that withdraws its result states no answer.
"""

from __future__ import annotations

import re

__all__ = ["WITHDRAWN", "withdrawal_after"]

WITHDRAWN = re.compile(
    r"(?:does\s*n[o']t|doesn't|do\s+not)\s+make\s+(?:any\s+)?sense|makes\s+no\s+sense|"
    r"\b(?:cannot|can't|can\s+not|unable\s+to|impossible\s+to)\s+(?:be\s+)?(?:determined?|"
    r"solved?|answered?|calculated?|computed?)|\bnot\s+enough\s+information|"
    r"\binsufficient\s+(?:information|data)|\bcorrected\s+(?:data|numbers|values|question|"
    r"problem|information)|\bplease\s+provide\b|\bplease\s+(?:check|verify|double-check|"
    r"clarify|confirm)\s+(?:the|your)?\s*(?:problem|question|data|numbers|values|details)|"
    r"\bthere\s+(?:may|might|must|seems\s+to)\s+be\s+(?:an?\s+)?(?:error|mistake|typo|"
    r"inconsistency)|\b(?:the\s+)?(?:problem|question|data)\s+(?:is|seems|appears\s+to\s+be)\s+"
    r"(?:flawed|inconsistent|incorrect|impossible|wrong)|\b(?:I'm|I\s+am)\s+not\s+(?:sure|certain)|"
    r"\bhold\s+on\b|\brather\s+not\s+(?:commit|say|give)|\bnever\s+mind\b|"
    r"\blet\s+me\s+(?:reconsider|rethink|revisit|fix\s+(?:that|this|it))\b|\bI\s+ignored\b|"
    r"\bscratch\s+that\b|\bI\s+(?:think\s+)?I(?:'ve|’ve|\s+have)\s+made\s+(?:a|an)\s+"
    r"(?:mistake|error)|\b(?:don't|don’t|do\s+not)\s+(?:trust|rely\s+on)\b|\bI\s+doubt\b|"
    r"\b(?:as|be|just|only)\s+a\s+(?:rough\s+)?guess\b|\b(?:could|may|might)\s+(?:well\s+)?be\s+"
    r"off\b|\b(?:might|may)\s+not\s+be\s+(?:right|correct|\$?\d[\d,.]*\d|\$?\d)|\bI\s+forgot\s+to\b|"
    r"\bI\s+(?:may|might)\s+have\s+(?:\w+\s+){1,4}incorrectly\b|verrechnet|"
    r"\b(?:I\s+)?may\s+(?:well\s+)?have\s+(?:misread|"
    r"misunderstood|made\s+(?:a|an)\s+(?:mistake|error))|\b(?:might|could|may)\s+be\s+wrong\b|"
    r"\bnot\s+confident\b|\b(?:could|can)\s+you\s+(?:please\s+)?"
    r"(?:clarify|confirm)|\bplease\s+clarify|\bneeds?\s+(?:more\s+)?clarification|"
    r"je\s+ne\s+suis\s+pas\s+sûr|no\s+estoy\s+segur[oa]|nicht\s+sicher|não\s+tenho\s+certeza|"
    r"\b(?:that|this|it)(?:'s|’s|\s+is)?\s+(?:can't|cannot|can\s+not|couldn't)\s+be\s+"
    r"(?:right|correct)|\b(?:that|this)(?:'s|’s|\s+is)\s+not\s+(?:right|correct|possible)|"
    r"\b(?:does\s*n[o']t|doesn't|do\s+not)\s+add\s+up|\b(?:which|that|this)\s+(?:is|would\s+be)"
    r"\s+impossible|\b(?:isn't|isn’t|is\s+not)\s+(?:possible|realistic)\b|\b(?:must|may|might)\s+"
    r"(?:contain|have)\s+(?:an?\s+)?(?:error|mistake|typo)|\berror\s+in\s+the\s+(?:question|"
    r"problem|data)|n['’]a\s+pas\s+de\s+sens|\bimpossible\b|\berreur\s+dans|"
    r"\bvérifie[rz]?\s+(?:l['’]énoncé|les\s+données)|no\s+tiene\s+sentido|\bimposible\b|"
    r"\berror\s+en\s+el\s+enunciado|\brevis[ae]\s+(?:el\s+enunciado|los\s+datos)|"
    r"keinen\s+Sinn|\bunmöglich\b|\bFehler\s+in\s+der\s+(?:Aufgabe|Angabe)|"
    r"\büberprüfe\w*\s+(?:die|deine)\s+(?:Angaben|Aufgabe|Daten)|não\s+faz\s+sentido|"
    r"\bimpossível\b|\berro\s+no\s+enunciado|"
    r"无法(?:给出|确定|计算|回答)|不能确定|不够清楚|不确定|不合理|有误|不可能|没有意义|"
    r"没有道理|\b(?:das\s+ist\s+falsch|neu\s+berechnen|errore\s+mio|devo\s+ricontrollare|"
    r"dat\s+is\s+fout|opnieuw\s+berekenen|это\s+неверно|неправильно|пересчитаю)\b|計算し直|"
    r"間違|다시\s*계산|틀렸|noch\s+einmal\s+(?:prüfen|rechnen)|nochmal\s+(?:prüfen|rechnen)|"
    r"przeliczyć|sprawdzić\s+jeszcze\s+raz|menghitung\s+ulang|hitung\s+ulang|yeniden\s+hesapla|"
    r"tính\s+lại|перепроверить|пересчитать|फिर\s+से\s+गणना",
    re.IGNORECASE,
)
"""A reply that takes its result back: it no longer states an answer."""


def withdrawal_after(text: str, position: int | None) -> str | None:
    """The last words after `position` (the last statement) that take the result back, if
    any; None where the reply has no statement."""
    start = 0 if position is None else position
    matches = list(WITHDRAWN.finditer(text, start))
    return matches[-1][0] if matches and position is not None else None
