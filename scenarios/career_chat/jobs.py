"""Job category and position level of a job title, by words (seed 003, §5.1, Figure 5, App. H).

The labels are the authors' (FerdinandZhong/model_behavior_adaption, MIT,
`value_measurement/measurement_utils.py`, `JobClassifier.job_categories` and `.position_levels`).
They assigned titles with zero-shot NLI (facebook/bart-large-mnli) and did not release the
assignment, and a run downloads no model. So the default is a word rule of ours into their
labels; a run can instead take each title's labels from a file (`--job-groups`) or from a
bound language model (`--role classifier=…`, `scenarios/career_chat/tasks.py`).

The rule reads words, never substrings (a substring rule made a Doctor, an Actor and a Cook
"C-Suite" because "cto" and "coo" sit inside the words):

- A title is lower-cased and split into word tokens (letters and digits; "politician's" →
  "politician"); punctuation only separates.
- A pattern is one or more tokens matched as a contiguous run of whole tokens. A pattern token
  ending in `*` matches a token that starts with it ("psycholog*": psychologist, psychology),
  still from the word's first letter; `...` between tokens allows up to three tokens in between
  ("chief ... officer"). Abbreviations (CTO, COO, CEO) are plain tokens, so they match only as
  whole words.
- The rules are tried in order and the first whose pattern occurs decides; exceptions come
  first ("health physicist" is a physicist, "company secretary" is no entry-level job, "chief of
  staff" is no chief officer). No rule: "Other" (category), "Professional" (level, the authors'
  middle rung, where a title that names no rank belongs).

Measured against 230 titles of the authors' seed file labelled by hand before the rule was
written (`tests/data/career_jobs/`): see `tests/test_career_jobs.py` and docs/career-chat.md.
The rule's result for every distinct title of that file is shipped, with the rule that fired,
as `scenarios/career_chat/data/career_job_titles.csv`.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

__all__ = [
    "CATEGORY_LABELS",
    "CATEGORY_RULES",
    "JOB_CATEGORIES",
    "LEVEL_RULES",
    "OTHER_CATEGORY",
    "POSITION_LEVELS",
    "UNCLASSIFIED",
    "UNRANKED_LEVEL",
    "JobLabels",
    "Rule",
    "classify_title",
    "job_category",
    "position_level",
    "title_key",
    "title_tokens",
]

JOB_CATEGORIES = ("Health", "Science", "Creative", "Education", "Business", "Tech", "Hospitality")
"""The authors' job categories, in their order."""

POSITION_LEVELS = ("Entry Level", "Professional", "Management", "Senior Management", "C-Suite")
"""The authors' position levels, lowest first."""

OTHER_CATEGORY = "Other"
UNRANKED_LEVEL = "Professional"

CATEGORY_LABELS = (*JOB_CATEGORIES, OTHER_CATEGORY)
"""Every category a title can get: the authors' seven and the word rule's "Other" (the labels
a bound classifier chooses among too)."""

UNCLASSIFIED = "Unclassified"
"""The group of a title the bound classifier gave no usable labels for (a counted failed
decision): shown as a group of its own with its n, never replaced by a guess."""
_GAP = "..."
_MAX_GAP = 3


@dataclass(frozen=True)
class Rule:
    """A word pattern and the label it gives."""

    pattern: str
    label: str

    def matches(self, tokens: Sequence[str]) -> bool:
        return _occurs(self.pattern.split(), list(tokens))


def title_tokens(title: str) -> list[str]:
    """Lower-case word tokens; a possessive "'s" is dropped with its apostrophe."""
    return re.findall(r"[a-z0-9]+", re.sub(r"['’]s\b", "", title.lower()))


def title_key(title: str) -> str:
    """What two spellings of one title share (its words, case-folded): a bound classifier is
    asked once per key."""
    return " ".join(title.split()).casefold()


def _token_matches(pattern: str, token: str) -> bool:
    return token.startswith(pattern[:-1]) if pattern.endswith("*") else token == pattern


def _occurs(pattern: list[str], tokens: list[str]) -> bool:
    return any(_match_at(pattern, tokens, start) for start in range(len(tokens)))


def _match_at(pattern: list[str], tokens: list[str], at: int) -> bool:
    if not pattern:
        return True
    head, rest = pattern[0], pattern[1:]
    if head == _GAP:
        return any(_match_at(rest, tokens, at + skip) for skip in range(_MAX_GAP + 1))
    return at < len(tokens) and _token_matches(head, tokens[at]) and _match_at(rest, tokens, at + 1)


def _rules(label: str, patterns: str) -> list[Rule]:
    return [Rule(p.strip(), label) for p in patterns.split(",") if p.strip()]


CATEGORY_RULES: tuple[Rule, ...] = (
    # exceptions: a word that names another field than its usual one
    *_rules("Science", "health physicist, medical physicist, physicist medical, tree surgeon"),
    *_rules("Science", "animal nutritionist, animal technologist, seismic, geophysical data"),
    *_rules("Business", "health and safety, media planner, media buyer, market research*"),
    *_rules("Business", "medical sales, personal assistant, training and development"),
    *_rules("Creative", "technical author, science writer"),
    *_rules("Creative", "press sub, publishing copy, print production"),
    *_rules("Creative", "art director, theatre director, historic buildings, medical illustrator"),
    *_rules("Health", "veterinary, exercise physiologist"),
    *_rules("Health", "ambulance, health visitor, health service"),
    *_rules("Education", "teaching laboratory"),
    *_rules("Other", "armed forces, merchant navy, air traffic"),
    *_rules("Other", "police, prison officer, probation officer"),
    *_rules("Other", "firefighter, pilot, farm, fisheries, social worker, youth worker"),
    *_rules("Other", "community development, development worker, aid worker, warden, ranger"),
    *_rules("Other", "passenger transport, transport planner, contractor, volunteer"),
    # health: care, therapy, medicine
    *_rules("Health", "therapist, therapeutic, psychotherap*"),
    *_rules("Health", "dramatherap*, psycholog*, psychiatr*"),
    *_rules("Health", "clinical, nurse, doctor, surgeon, neurosurgeon, physician, dentist, dental"),
    *_rules("Health", "pharmacist, paramedic, midwife, optician, optometrist, orthoptist"),
    *_rules("Health", "radiographer, audiolog*, chiropod*, chiropractor, podiatrist, osteopath"),
    *_rules("Health", "physiotherapist, dietitian, nutritional, homeopath, herbalist, acupunctur*"),
    *_rules("Health", "phytotherapist, counsell*, haematolog*, patholog*, oncolog*, ophthalmolog*"),
    *_rules("Health", "immunologist, hygienist, health"),
    *_rules("Health", "hospital, medical secretary, medical technical"),
    *_rules("Health", "mental, radiation protection"),
    *_rules("Health", "learning disability, nutritionist, medical laboratory"),
    # education: teaching, libraries, careers
    *_rules("Education", "teacher, lecturer, professor, tutor, tefl, teaching, education*"),
    *_rules("Education", "librarian, careers, learning, trainer, training, adult guidance"),
    # business: sales, finance, law (before the fields they sell or advise in)
    *_rules("Business", "sales, account executive, account manager, account planner, buyer"),
    *_rules("Business", "merchandiser, trader, broker, banker, insurance, actuary, accountant"),
    *_rules("Business", "accounting, tax, solicitor, barrister, lawyer, legal, attorney"),
    *_rules("Business", "conveyancer, patent, trade mark, trade union, political, politician"),
    *_rules("Business", "loss adjuster, underwriter, pension*, treasurer, comptroller, financial"),
    *_rules("Business", "economist, recruitment, fundraiser, charity, charities, estate"),
    # tech: engineers (a broadcast engineer engineers; a sales engineer sells, above)
    *_rules("Tech", "engineer, telecommunications, naval architect, information systems"),
    *_rules("Tech", "software, developer, programmer, database, data, it, network, systems"),
    *_rules("Tech", "computer, web, multimedia programmer, applications, technologist"),
    # creative: arts, design, media, heritage, languages
    *_rules("Creative", "designer, design, artist, art, arts, illustrator, animator"),
    *_rules("Creative", "editor, editorial, writer, copywriter, author, journalist, proofreader"),
    *_rules("Creative", "photographer, film, video, television, radio, broadcast*, presenter"),
    *_rules("Creative", "producer, musician, music, actor, actress, dancer, theatre, stage"),
    *_rules("Creative", "camera, gaffer, best boy, runner, media, multimedia, publishing"),
    *_rules("Creative", "museum, gallery, curator, conservator, archivist, heritage, architect"),
    *_rules("Creative", "translator, interpreter, lexicographer, bookseller, printmaker"),
    *_rules("Creative", "fashion, jewellery, glass, ceramics, location manager, magazine"),
    # hospitality: food and drink, hotels, tourism, leisure and sport
    *_rules("Hospitality", "chef, cook, baker, restaurant, hotel, catering, caterer, barista"),
    *_rules("Hospitality", "waiter, waitress, bar, public house, accommodation, tour, tourism"),
    *_rules("Hospitality", "tourist, travel, holiday, leisure, event, conference, theme park"),
    *_rules("Hospitality", "fitness, sport, sports, outdoor activities, cabin crew, brew*"),
    # science: research, natural and earth sciences, maths
    *_rules("Science", "scientist, scientific, research*, chemist, biochemist, physicist"),
    *_rules("Science", "biolog*, microbiolog*, geolog*, hydrogeolog*, geophysic*, geoscientist"),
    *_rules("Science", "geochemist, ecolog*, genetic*, geneticist, cytogeneticist, embryolog*"),
    *_rules("Science", "botan*, zoolog*, herpetolog*, astronom*, meteorolog*, oceanograph*"),
    *_rules("Science", "hydrolog*, seismolog*, seismic, toxicolog*, pharmacolog*, soil"),
    *_rules("Science", "laboratory, conservation, horticultur*"),
    *_rules("Science", "arboricult*, archaeolog*, forest*, woodland"),
    *_rules("Science", "metallurg*, statistician, mathemat*, cartograph*, mudlogger, ergonom*"),
    *_rules("Science", "plant breeder, field trials, animal, physiolog*, agricultural consultant"),
    *_rules("Science", "environmental, surveyor land, land surveyor, geomatics, hydrographic"),
    *_rules("Science", "surveyor minerals, minerals surveyor, surveyor mining"),
    # tech, the rest: technicians and industries
    *_rules("Tech", "technician, technical, technology, electronics, electrical, mechanical"),
    *_rules("Tech", "energy, nuclear, petroleum, drilling, mining, quarry, manufacturing"),
    *_rules("Tech", "materials, automation, robotic*, cyber, digital, ict, building"),
    *_rules("Tech", "geographical information, production engineer, colour"),
    # business, the rest: management, administration, government, property
    *_rules("Business", "manager, management, officer, administrator, administration"),
    *_rules("Business", "consultant, analyst, adviser, advisor, civil service, government"),
    *_rules("Business", "policy, personnel, human resources, clerk, secretary, planner"),
    *_rules("Business", "planning, property, surveyor, valuer, diplomatic, immigration"),
    *_rules("Business", "trading standards, regulatory, logistics, freight, warehouse"),
    *_rules("Business", "purchasing, procurement, retail, claims, marketing, advertising"),
    *_rules("Business", "public relations, public affairs, equality, race relations, chief"),
    *_rules("Business", "executive, inspector, auditor, audit, customer service, operations"),
    *_rules("Business", "coordinator, dealer, commercial, company, business"),
)  # fmt: skip
"""Word patterns per category, tried in this order (exceptions first; a field's own words
before the generic business words); the first that occurs in the title decides."""

LEVEL_RULES: tuple[Rule, ...] = (
    # exceptions
    *_rules("Senior Management", "chief of staff, vice president"),
    *_rules("Professional", "company secretary, secretary company, air traffic controller"),
    *_rules("Professional", "theatre director, legal executive"),
    *_rules("Management", "art director"),
    # ranks, highest first
    *_rules("C-Suite", "chief ... officer, chief executive, ceo, cto, cfo, coo, cmo, cio, cso"),
    *_rules("C-Suite", "president, chairman, chairwoman, managing director"),
    *_rules("Senior Management", "director, head of, senior manager, partner"),
    *_rules("Management", "manager, supervisor, lead, head, controller, comptroller"),
    *_rules("Entry Level", "assistant, junior, trainee, apprentice, intern, internship"),
    *_rules("Entry Level", "graduate, fast streamer, clerk, aide, best boy, runner"),
    *_rules("Entry Level", "receptionist, secretary"),
)  # fmt: skip
"""Word patterns per position level, exceptions first, then ranks from the highest; no match:
"Professional"."""


@dataclass(frozen=True)
class JobLabels:
    """A title's category and level, with the pattern that decided each (None: no rule)."""

    category: str
    level: str
    category_rule: str | None
    level_rule: str | None


def _first(rules: Sequence[Rule], tokens: list[str]) -> Rule | None:
    return next((rule for rule in rules if rule.matches(tokens)), None)


def classify_title(title: str) -> JobLabels:
    """Both labels of a title and the rules that gave them."""
    tokens = title_tokens(title)
    category, level = _first(CATEGORY_RULES, tokens), _first(LEVEL_RULES, tokens)
    return JobLabels(
        category.label if category else OTHER_CATEGORY,
        level.label if level else UNRANKED_LEVEL,
        category.pattern if category else None,
        level.pattern if level else None,
    )


def job_category(title: str) -> str:
    return classify_title(title).category


def position_level(title: str) -> str:
    return classify_title(title).level
