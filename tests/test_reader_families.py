"""The families of closings chat models write, each with phrasings written for these tests
(none taken from a labelled corpus), read as a careful grader reads them: a value only where no
grader would hesitate, else "unreadable" or "ambiguous" with a reason (docs/readers.md,
"Families the readers know").

Each case is (reply, expected): a number, or `U` (unreadable) / `A` (ambiguous). A reading's
status is checked where the family decides it (a hedge is ambiguous, a withdrawal unreadable);
`NO` accepts either, where the family only says there is no value.
"""

from __future__ import annotations

import pytest

from personasim.environments import read_answer
from personasim.environments.trust_game.transfer import read_transfer

U, A, NO = "unreadable", "ambiguous", "no value"

MATH_FAMILIES: dict[str, list[tuple[str, float | str]]] = {
    "hedges and bounds are no exact answer": [
        ("The answer is about 42.", A),
        ("Final answer: approximately 3.14", A),
        ("Final Answer: ~42", A),
        ("So he pays $64, more or less.", A),
        ("He pays something like $64.", A),
        ("Final answer: under 20 minutes", A),
        ("Final answer: 12ish", A),
        ("Final answer: 12 (approximately)", A),
        ("She needs 13 boxes at minimum.", A),
        ("I'd estimate the answer is 40.", A),
        ("The answer is 18, I think.", A),
        ("Respuesta: aproximadamente 64 dólares.", A),
        ("Antwort: ungefähr 64 Dollar.", A),
        ("答案：约 18 美元。", A),
        ("Final Answer: 33.33 (rounded)", 33.33),  # a rounded value is still stated
        # "adds up to" is no bound; a which-clause with another sum still lists two quantities
        ("Janet earns $18 per day, which adds up to $540 over a 30-day month.", NO),
    ],
    "self-corrections: the last corrected statement": [
        ("The answer is 40; wait, I forgot the tax, so it's 43.", 43),
        ("Answer: 20. Hmm, no — I forgot breakfast. Answer: 26.", 26),
        ("Answer: 20\n\n**Update:** I missed breakfast; the correct answer is 26.", 26),
        ("Final answer: ~~20~~ 26", 26),
        ("Respuesta: 16 $. Perdón, me equivoqué: son 18 $.", 18),
        ("答案：16 美元。更正：答案是 18 美元。", 18),
        ("The answer is 50. Hmm, wait, that can't be right.", U),
    ],
    "a result the reply withdraws": [
        ("The answer would be -2, but you can't sell a negative number of eggs, so the question "
         "must contain an error.", U),
        ("La réponse serait -2, ce qui est impossible. Il doit y avoir une erreur dans l'énoncé.",
         U),
        ("La respuesta sería -2, lo cual no tiene sentido.", U),
        ("Die Antwort wäre -2, was keinen Sinn ergibt. Bitte überprüfe die Angaben.", U),
        ('{"reasoning": "1. **Total:** $165 * 12 = **$1980**.", "answer": "Not possible"}', U),
        ('{"reasoning": "She has **5 apples**.", "answer": "___"}', U),
        ("Final Answer: N/A\n\nJanet makes **$18**.", U),
    ],
    "alternatives and second conclusions after the answer": [
        ("Answer: 20 cups (26 with breakfast).", A),
        ("**Answer: 96**\n\n(If the question meant per day, it would be 12.)", A),
        ("Answer: $18\n\nShe makes $20 per day in total.", A),
        ("The answer is 18.\n\n**Total: $20**", A),
        ("**9 eggs** are left.\n\nShe makes $18.", A),
        ("Janet has 9 eggs left.\n\nHere's how: 16 − 3 − 4 = 9.\n\nShe sells them for $18.", A),
        ("Janet makes $18 a day.\n\nHere's why: 9 × $2 = $18.\n\nTherefore, she earns $18 daily.",
         18),
    ],
    "two quantities, expressions, times and dashes": [
        ("Answer: 27 selfies, 18 portraits", A),
        ("Réponse : 16 $ ou 18 $.", A),
        ("Final answer: 6 × 7", NO),  # an expression without its result
        ('{"reasoning": "...", "answer": "12:30 PM"}', NO),  # a time of day
        ("The answer is –7 °C.", NO),  # a dash against the number: minus sign or punctuation?
        ("Final answer - 42", 42),  # a hyphen between spaces is punctuation
    ],
    "fractions in words, Chinese numerals, mixed numbers, years": [
        ("Three eighths of the pizza is left.", 0.375),
        ("Il reste trois huitièmes de la pizza.", 0.375),
        ("Es bleiben drei Achtel der Pizza übrig.", 0.375),
        ("还剩八分之三的披萨。", 0.375),
        ("The answer is three and a half hours.", 3.5),
        ("She needs two and three quarters cups of flour.", 2.75),
        ("La respuesta es tres cuartos.", NO),  # "cuartos" are rooms too
        ("答案是二十六。", 26),
        ("比利星期二一共卖出了七张 DVD。", 7),  # 星期二 is Tuesday, 一共 "altogether"
        ("Final Answer: 5 ½ hours", 5.5),
        ("So each friend gets $\\boxed{2\\frac{1}{4}}$ pizzas.", 2.25),
        ("Final Answer: 1'250", 1250),
        ("Der Umsatz 2024 beträgt 4,2 Millionen Euro.", 4_200_000),
        ("2024年的营业额是420万元。", 4_200_000),
    ],
    "closings: labelled last lines, explanations, conclusions in other languages": [
        ("Total: $18", 18),
        ("She makes 18 dollars, because 9 × 2 = 18.", 18),
        ("Janet vende 9 huevos a 2 $ cada uno, así que gana 18 $ al día.", 18),
        ("## Antwort\n\n**18 $** pro Tag.\n\n16 − 3 − 4 = 9 Eier zu je 2 $.", 18),
        ("Final Answer: She sells 9 eggs, earning $18.", NO),  # the readers disagree
        ("월요일: 3개\n화요일: 4개\n\n답: 모두 7개", 7),  # a Korean answer label
        ("Llenó 3 cajas con 4 libros cada una, así que le quedan siete libros.", 7),
    ],
    "JSON answer fields": [
        ('{\n    "reasoning": "5 * 4 = 20\\n",\n    "answer": "20",\n    "answer": "24"\n}', A),
        ('{"reasoning": "...", "answer": "20"}\n{\n    "reasoning": "Second try: 6 * 4 = 24.\n'
         '    "answer": "24"\n}', A),
        ('{\n    "reasoning": "6 * 4 = 24.\n    "answer": "24"\n}\n\nThe answer is 24.', 24),
    ],
    "new questions the reply goes on to write": [
        ('```json\n{"reasoning": "2 + 1 + 4 = 7", "answer": "7"}\n```\n\n### Follow-up Question '
         '1:\nWhat if he plays twice as many?\n\n```json\n{"reasoning": "...", "answer": "11"}'
         "\n```", 7),
        ('{"reasoning": "2 + 1 + 4 = 7", "answer": "7"}\n\nQuestion 2: How many in two weeks?\n'
         '{"reasoning": "7 * 2 = 14", "answer": "14"}', 7),
        ('{"reasoning": "2 + 1 + 4 = 7", "answer": "7"}\n\nNow, let\'s consider a more difficult '
         'question:\n\nJoey plays 3 matches a day.\n{"reasoning": "...", "answer": "21"}', 7),
    ],
    "boxes and loops": [
        ("First, the jacket costs \\boxed{80}. Then the shoes cost \\boxed{150}. Therefore, the "
         "total cost is \\boxed{230}.", 230),
        ("The shirts cost $\\boxed{40}$ and the pants cost $\\boxed{60}$.", A),
        ('{"reasoning": "So he is 45 miles away. However, he drove back. So the answer is 45 '
         "miles. However, he drove back. So the answer is 45 miles. However, he drove back. So "
         'the answer is 45 miles. However, he drove back. So the', U),
    ],
    "closing equations: the result the last sentence computes": [
        ("She had 40 − 12 = 28 stickers left after giving 12 away. She then bought 12 more, so "
         "she has 28 + 12 = 40 stickers.", 40),  # 40 is an operand above, but computed here
        ("Each box holds 6 × 4 = 24 cans.\nThe store needs 96 ÷ 24 = 4 boxes.", 4),
        ("Er hat 3 × 5 = 15 Äpfel gekauft. Nach dem Essen bleiben 15 − 3 = 12 Äpfel übrig.", 12),
        ("Elle a 12 billes. Elle en donne 5 : il lui reste 12 − 5 = 7 billes.", 7),
        ("A whirligig spins 5 times as fast: 5 × 11 = 55 m/s.", 55),  # a rate's unit, no algebra
        ("The car travels at 55 km/h.", 55),
        ("He is 30 − 18 = 12 now, and 12 + 5 = 17.", 17),  # a chain: 12 feeds the last equation
        ("Ana tiene 7 lápices, compra 5 y regala 3: 7 + 5 − 3 = 9 lápices.", 9),
        ("Tom has 5 marbles, and Jerry has 5 × 2 = 10 marbles.", A),  # two quantities
    ],
    "closings: concluding labels, purposes, worked asides, multipliers, groupings": [
        ("Nani: 8 years\nBrother: 2 × 8 = 16 years\n\nTotal: 8 + 16 = 24 years", 24),
        ("Einnahmen: 20 × 2,50 $ = 50,00 $\nGewinn: 50,00 $ − 62,00 $ = −12,00 $", -12),
        ("Bénéfice : 120 € − 45 € = 75 €", 75),
        ("Eggs: 3 × 2 = 6\n- Milk: 2 × 4 = 8", NO),  # a list that may stop at a step
        ("To make a $500 profit, the shop must charge $1,200 + $500 = $1,700.", 1700),
        ("To find the total, we add 3 + 4 = 7", NO),  # a step of the working, not ended
        ("You need 2 1/2 cups of flour (5 × 1/2 = 5/2).", 2.5),
        ("12 days (36 pages a day and 432 ÷ 36).", 12),
        ("Das Startup hat insgesamt 3,4 Mio. € eingesammelt.", 3_400_000),
        ("Der Gewinn beträgt 1,2 Mrd. $.", 1_200_000_000),
        ("There are 4,250 people in the town.", 4250),
        ("The answer is ₹6,50,000.", 650_000),  # Indian grouping, not 6.5
        ("The answer is 6.5 lakh rupees.", 650_000),
        ("The project costs 2 crore rupees.", 20_000_000),
        ("答案是7万2000元。", 72_000),  # one compound, not 7万 then 2000
        ("总共需要1亿2000万元。", 120_000_000),
    ],
    "signs in words and questions written inline": [
        ("He finished four under par.", -4),
        ("Final answer: 4 under par (−4)", -4),
        ("Janet makes $18. Question 2: How much in a week? Answer: 126", 18),
    ],
    "a check after the answer": [
        ("The answer is 36 hours.\n\nLet me verify:\n- 5 weeks × 4 h = 20 h\n- Sum: 20 + 16 +",
         36),  # cut off inside the check
        ("Answer: 36.\n\nSo the total is 20 + 10 +", A),  # no check: a cut-off conclusion
    ],
}  # fmt: skip


def _expected(reading_status: str, value: object, expect: float | str) -> bool:
    if expect == NO:
        return reading_status in (U, A)
    if isinstance(expect, str):
        return reading_status == expect
    return reading_status == "read" and value == pytest.approx(expect)


@pytest.mark.parametrize(
    ("family", "reply", "expect"),
    [(family, reply, expect) for family, cases in MATH_FAMILIES.items() for reply, expect in cases],
)
def test_math_answer_families(family: str, reply: str, expect: float | str) -> None:
    reading = read_answer(reply)
    assert _expected(reading.status, reading.value, expect), (family, reading)
    assert reading.ok or reading.reason  # no value without a reason


TRANSFER_FAMILIES: dict[str, list[tuple[str, float | str]]] = {
    "corrections, withdrawals and questions": [
        ("Finally, I will give 8 dollars. Hmm, on second thought, 6 dollars.", 6),
        ("Finally, I will give 5 dollars. No wait, make it 7.", 7),
        ("Finally, I will give 6, err, 7 dollars.", 7),
        ("Finally, I will give ~~8~~ 6 dollars.", 6),
        ("Finalmente, daré 5 dólares; en realidad, 4.", 4),
        ("Finalement, je donnerai 6 dollars. En fait, non, 4 dollars.", 4),
        ("Finalmente, daré 8 dólares. No, mejor 6.", 6),
        ("最后，我会给8美元。不，还是给6美元。", 6),
        ("Finally, I will give 8 dollars. Actually, no.", U),
        ("Finally, I will give 5 dollars?", A),
    ],
    "contrasts and other cases beside the amount": [
        ("Finally, I will give 6 dollars rather than 10.", 6),  # "rather than" is no correction
        ("Finally, I will give 6 dollars, if not 7.", A),
        ("Finally, I will give 6 dollars unless they seem untrustworthy, in which case 2.", A),
        ("Finally, I will give 3 dollars, if not more.", A),
        ("Finally, I will give 5 dollars. Hmm, 7 might be better.", A),
        ("Finally, I will give 3 dollars. 4 would be too much.", 3),
    ],
    "labels and second statements of the amount": [
        ("Decision: give $7.\nFinally, I will give 6 dollars.", A),
        ("Finally, I will give 6 dollars. My answer: 7 dollars.", A),
        ("Finally, I will give 5 dollars.\n\\boxed{7}", A),
        ("Finally, I will give 5 dollars.\n\\boxed{5}", 5),
        ("Finally, I will give the other player 5 of my 10 dollars.", 5),
        ("Finally, I will give Player 2 1/2 of my money.", 5),
    ],
    "amounts the game refuses or no reader can take": [
        ("Finally, I will give five and a half dollars.", U),
        ("Finally, I will give 5 1/2 dollars.", U),
        ("Finally, I will give $1M.", A),
        ("Finally, I will give 6 yuan.", A),
        ("Finally, I will give 3 + 2 = 5 dollars.", 5),
        ("Finally, I will give 5 dol", U),  # cut off
        ("Finally, I will give 1", U),  # cut off, or the start of 10
        ("Finalement, je ne donnerai que 3 dollars.", 3),  # "ne ... que": only
        ("最后，我什么也不给。", 0),
    ],
    "the closing's natural variants: its last sentence decides": [
        ("Belief: x.\nDesire: y.\n\nI will send 7 dollars.", 7),
        ("I'll transfer $4.", 4),
        ("I'm giving 3 dollars to the other player.", 3),
        ("I'm not sending anything.", 0),
        ("I will offer 6 dollars, or maybe 4.", A),
        ("I will give 5 dollars if they seem kind. I hope they return some.", U),  # not last
        ("最後に、私は7ドルを渡します。", 7),
        ("最終的に、私は半分を渡します。", 5),
        ("最後に、私は何も渡しません。", 0),
        ("最後に、私は5ドルくらいを渡します。", A),
        ("마지막으로, 나는 5달러를 주겠습니다.", 5),
        ("마지막으로, 나는 약 5달러를 주겠습니다.", A),
        ("Infine, darò 3 dollari all'altro giocatore.", 3),  # "all'" is a preposition
    ],
    "labelled amounts and JSON amount fields": [
        ("Belief: b\nIntention: send most.\n\nTransfer: eight dollars.", 8),
        ("Amount to send: $2", 2),
        ("### Final decision\n**$9**", 9),
        ("## Decision\n$3\n\nI hope it works.", U),  # the labelled line is not the last
        ('{"belief": "fair", "amount": 4, "expected_return": 6}', 4),
        ('{"belief": "fair", "transfer": "6 dollars"}', 6),
        ('{"amount": 4, "amount_sent": 5}', A),
        ('{"belief": "b", "expected_return": 6}', U),  # no amount field
    ],
}


def transfer_status(reply: str) -> tuple[str, object]:
    """The transfer reader, then the game's rule (whole dollars from 0 to 10)."""
    reading = read_transfer(reply, 10)
    if reading.ok and not (float(reading.value).is_integer() and 0 <= reading.value <= 10):
        return U, None
    return reading.status, reading.value


@pytest.mark.parametrize(
    ("family", "reply", "expect"),
    [(f, reply, expect) for f, cases in TRANSFER_FAMILIES.items() for reply, expect in cases],
)
def test_transfer_families(family: str, reply: str, expect: float | str) -> None:
    status, value = transfer_status(reply)
    assert _expected(status, value, expect), (family, read_transfer(reply, 10))
