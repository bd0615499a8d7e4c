"""Job category and position level of a job title, by words (seed 003, §5.1, Figure 5, App. H).

The labels are the authors' (FerdinandZhong/model_behavior_adaption, MIT,
`value_measurement/measurement_utils.py`, `JobClassifier.job_categories` and `.position_levels`).
They assigned titles with zero-shot NLI (facebook/bart-large-mnli) and did not release the
assignment, and a run downloads no model. So the default is a word rule of ours into their
labels; a run can instead take each title's labels from a file (`--job-groups`) or from a
bound language model (`--role classifier=…`, `scenarios/career_chat/tasks.py`).

The rule is a high-precision rule: it gives a label only where a careful labeller following
the guide (tests/data/career_jobs/README.md) would not hesitate, and **"Unknown"** otherwise.
Category and level are decided separately, each with the rule that decided it:

- A title is lower-cased and split into word tokens (letters and digits; "politician's" →
  "politician"); punctuation only separates. A pattern is one or more tokens matched as a run
  of whole tokens: `psycholog*` matches a token that starts so, `...` allows up to three tokens
  in between, `^` and `$` anchor at the title's start and end.
- **Not a current job** first: "X, now Y" is read as Y; "former", "ex", "retired", "aspiring"
  and the like, and student, unemployed, homemaker... leave both labels Unknown.
  "Assistant to the X" is read up to "to": an assistant, not an X.
- **Category**: the first pattern of `CATEGORY_RULES` that occurs decides (exceptions first;
  an exception may decide "Unknown" where the words leave the field in doubt: "UX", "social
  media"); generic office words (manager, officer, analyst...) give Business only when every
  other word of the title is a business word ("Records manager", not "Spa manager"); two
  fields joined by "and", "&" or "/" are Unknown; no pattern: Unknown.
- **Level**: every rank pattern of `LEVEL_RULES` that occurs (a pattern inside a longer one,
  "vice president" inside "senior vice president", yields to it); two different ranks are
  Unknown; a rank in doubt ("deputy director", "lead", "principal engineer", military ranks,
  "chief" outside "chief X officer") is Unknown; no rank and the occupation recognised (a
  category pattern occurred): Professional, the guide's level of a title that names no rank;
  else Unknown.

Measured on the 230 titles of the authors' seed file labelled by hand (`tests/data/career_jobs/`,
the development set the rule was tuned on): `tests/test_career_jobs.py` prints right, wrong and
Unknown per label. The rule's result for every distinct title of that file is shipped, with the
rules that fired, as `scenarios/career_chat/data/career_job_titles.csv`.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

from personasim.scenarios.career_chat.title_words import (
    Rule,
    rules,
    title_key,
    title_tokens,
    word_set,
)
from personasim.simulation import Reading

__all__ = [
    "CATEGORY_LABELS",
    "CATEGORY_RULES",
    "JOB_CATEGORIES",
    "LEVEL_LABELS",
    "LEVEL_RULES",
    "OTHER_CATEGORY",
    "POSITION_LEVELS",
    "STATUS_RULES",
    "UNCLASSIFIED",
    "UNKNOWN",
    "UNRANKED_LEVEL",
    "WORD_RULE",
    "JobLabels",
    "Rule",
    "classify_title",
    "job_category",
    "position_level",
    "read_title",
    "title_key",
    "title_tokens",
]

JOB_CATEGORIES = ("Health", "Science", "Creative", "Education", "Business", "Tech", "Hospitality")
"""The authors' job categories, in their order."""

POSITION_LEVELS = ("Entry Level", "Professional", "Management", "Senior Management", "C-Suite")
"""The authors' position levels, lowest first."""

OTHER_CATEGORY = "Other"
"""A field outside the authors' seven that the guide names (armed forces, police, farming...)."""

UNKNOWN = "Unknown"
"""The label a reader gives when it would hesitate: a group of its own, never a guess."""

UNRANKED_LEVEL = "Professional"
"""The level of a recognised occupation whose title names no rank (the guide's middle rung)."""

CATEGORY_LABELS = (*JOB_CATEGORIES, OTHER_CATEGORY, UNKNOWN)
"""Every category a title can get, the choices offered to a bound classifier too."""

LEVEL_LABELS = (*POSITION_LEVELS, UNKNOWN)
"""Every level a title can get, the choices offered to a bound classifier too."""

UNCLASSIFIED = "Unclassified"
"""The group of a title the bound classifier gave no usable labels for (a counted failed
decision): shown as a group of its own with its n, never replaced by a guess."""

WORD_RULE = "word rule"
"""The name a reading by this module carries in `by` (with the patterns that fired)."""

# --- not a current job ------------------------------------------------------------------------

STATUS_RULES: tuple[Rule, ...] = (
    *rules("not a current job", "former, formerly, ex, previously, past, retired, retiree"),
    *rules("not a current job", "aspiring, would be, wannabe, prospective, future, recent"),
    *rules("not in work", "student, pupil, undergraduate, phd candidate, unemployed, jobless"),
    *rules("not in work", "job seeker, jobseeker, looking for work, seeking work, between jobs"),
    *rules("not in work", "not working, not employed, homemaker, housewife, househusband"),
    *rules("not in work", "stay at home, career break, pensioner, laid off, none, n a, ^ na $"),
)  # fmt: skip
"""Words that say the title is no current job: both labels Unknown (after "now", the words
before it are not read)."""

_NOW = {"now", "currently"}

# --- category ---------------------------------------------------------------------------------

_CATEGORY_EXCEPTIONS: tuple[Rule, ...] = (
    # the words leave the field in doubt: no label
    *rules(UNKNOWN, "ux, ui, user experience, user interface, social media, instructional"),
    *rules(UNKNOWN, "medical writer, dog trainer, animal trainer, horse trainer"),
    *rules(UNKNOWN, "web designer, web design, martial arts"),
    # a word that names another field than its usual one
    *rules("Science", "health physicist, medical physicist, physicist medical, tree surgeon"),
    *rules("Science", "animal nutritionist, animal technologist, seismic, geophysical data"),
    *rules("Business", "health and safety, media planner, media buyer, market research*"),
    *rules("Business", "medical sales, personal assistant, training and development"),
    *rules("Business", "property developer, business develop*, data entry, chief of staff"),
    *rules("Business", "equity research, investment research, chief operating officer"),
    *rules("Business", "digital marketing, health insurance"),
    *rules("Creative", "technical author, science writer"),
    *rules("Creative", "press sub, publishing copy, print production"),
    *rules("Creative", "art director, theatre director, historic buildings, medical illustrator"),
    *rules("Health", "veterinary, exercise physiologist"),
    *rules("Health", "ambulance, health visitor, health service"),
    *rules("Hospitality", "personal trainer, fitness instructor"),
    *rules("Education", "teaching laboratory"),
    *rules("Tech", "machine learning, deep learning, solution architect, solutions architect"),
    *rules("Tech", "enterprise architect, cloud architect"),
    # fields outside the seven that the guide names
    *rules("Other", "armed forces, merchant navy, air traffic, army, navy, naval officer"),
    *rules("Other", "military, soldier, air force, marine corps, marines, coast guard"),
    *rules("Other", "petty officer, warrant officer, sergeant, corporal, lieutenant, colonel"),
    *rules("Other", "brigadier, admiral, commodore, ensign, ^ general $, ^ captain $"),
    *rules("Other", "police, policeman, policewoman, prison officer, probation officer"),
    *rules("Other", "law enforcement"),
    *rules("Other", "correctional officer, parole officer, firefighter, fire officer, pilot"),
    *rules("Other", "farm, farmer, fisheries, social worker, youth worker"),
    *rules("Other", "community development, development worker, aid worker, warden, ranger"),
    *rules("Other", "passenger transport, transport planner, contractor, volunteer"),
)  # fmt: skip

_CATEGORY_FIELDS: tuple[Rule, ...] = (
    # health: care, therapy, medicine
    *rules("Health", "therapist, therapeutic, psychotherap*"),
    *rules("Health", "dramatherap*, psycholog*, psychiatr*"),
    *rules("Health", "clinical, nurse, nursing, doctor, surgeon, neurosurgeon, physician"),
    *rules("Health", "dentist, dental, pharmacist, paramedic, midwife, optician, optometrist"),
    *rules("Health", "orthoptist, radiographer, audiolog*, chiropod*, chiropractor, podiatrist"),
    *rules("Health", "osteopath, physiotherapist, dietitian, nutritional, homeopath, herbalist"),
    *rules("Health", "acupunctur*, phytotherapist, counsell*, haematolog*, patholog*"),
    *rules("Health", "oncolog*, ophthalmolog*, immunologist, hygienist, health"),
    *rules("Health", "hospital, medical secretary, medical technical, pharmacy"),
    *rules("Health", "mental, radiation protection"),
    *rules("Health", "learning disability, nutritionist, medical laboratory"),
    # education: teaching, libraries, careers
    *rules("Education", "teacher, lecturer, professor, tutor, tefl, teaching, education*"),
    *rules("Education", "librarian, careers, learning mentor, learning support, trainer"),
    *rules("Education", "training, adult guidance, dean, headteacher, head teacher"),
    *rules("Education", "headmaster, headmistress, school principal, college principal"),
    # business: sales, finance, law (before the fields they sell or advise in)
    *rules("Business", "sales, account executive, account manager, account planner, buyer"),
    *rules("Business", "merchandiser, trader, broker, banker, insurance, actuary, accountant"),
    *rules("Business", "accounting, tax, solicitor, barrister, lawyer, legal, attorney"),
    *rules("Business", "law, counsel, paralegal, conveyancer, patent, trade mark, trade union"),
    *rules("Business", "political, politician, loss adjuster, underwriter, pension*"),
    *rules("Business", "treasurer, comptroller, financial, finance, economist, recruitment"),
    *rules("Business", "fundraiser, charity, charities, estate, cfo, coo, ceo"),
    # tech: engineers (a broadcast engineer engineers; a sales engineer sells, above)
    *rules("Tech", "engineer, telecommunications, naval architect"),
    *rules("Tech", "information systems, software, developer, programmer, database, data"),
    *rules("Tech", "it, network, systems, computer, web, multimedia programmer, applications"),
    *rules("Tech", "technologist, devops, cybersecurity, cto"),
    # creative: arts, design, media, heritage, languages
    *rules("Creative", "designer, design, artist, art, arts, illustrator, animator"),
    *rules("Creative", "editor, editorial, writer, copywriter, author, journalist, proofreader"),
    *rules("Creative", "photographer, film, video, television, radio, broadcast*, presenter"),
    *rules("Creative", "producer, musician, music, actor, actress, dancer, theatre, stage"),
    *rules("Creative", "camera, gaffer, best boy, runner broadcasting, media, multimedia"),
    *rules("Creative", "publishing, museum, gallery, curator, conservator, archivist"),
    *rules("Creative", "heritage, ^ architect, landscape architect, architectural"),
    *rules("Creative", "translator, interpreter, lexicographer, bookseller, printmaker"),
    *rules("Creative", "fashion, jewellery, glass, ceramics, location manager, magazine"),
    # hospitality: food and drink, hotels, tourism, leisure and sport
    *rules("Hospitality", "chef, cook, baker, restaurant, hotel, catering, caterer, barista"),
    *rules("Hospitality", "bartender, waiter, waitress, bar, public house, accommodation"),
    *rules("Hospitality", "tour, tourism, tourist, travel, holiday, leisure, event"),
    *rules("Hospitality", "conference, theme park, fitness, sport, sports"),
    *rules("Hospitality", "outdoor activities, cabin crew, brew*"),
    # science: research, natural and earth sciences, maths
    *rules("Science", "scientist, scientific, research*, chemist, biochemist, physicist"),
    *rules("Science", "biolog*, microbiolog*, geolog*, hydrogeolog*, geophysic*, geoscientist"),
    *rules("Science", "geochemist, ecolog*, genetic*, geneticist, cytogeneticist, embryolog*"),
    *rules("Science", "botan*, zoolog*, herpetolog*, astronom*, meteorolog*, oceanograph*"),
    *rules("Science", "hydrolog*, seismolog*, toxicolog*, pharmacolog*, soil"),
    *rules("Science", "laboratory, conservation, horticultur*"),
    *rules("Science", "arboricult*, archaeolog*, forest*, woodland"),
    *rules("Science", "metallurg*, statistician, mathemat*, cartograph*, mudlogger, ergonom*"),
    *rules("Science", "plant breeder, field trials, animal, physiolog*, agricultural consultant"),
    *rules("Science", "environmental, surveyor land, land surveyor, geomatics, hydrographic"),
    *rules("Science", "surveyor minerals, minerals surveyor, surveyor mining"),
    # tech, the rest: technicians and industries
    *rules("Tech", "technician, technical, technology, electronics, electrical, mechanical"),
    *rules("Tech", "energy, nuclear, petroleum, drilling, mining, quarry, manufacturing"),
    *rules("Tech", "materials, automation, robotic*, cyber, digital, ict, building"),
    *rules("Tech", "geographical information, production engineer, colour, engineering"),
    # business, the rest: fields of administration, government, property
    *rules("Business", "civil service, government, policy, personnel, human resources, hr"),
    *rules("Business", "planning, property, surveyor, valuer, diplomatic, immigration"),
    *rules("Business", "trading standards, regulatory, logistics, freight, warehouse"),
    *rules("Business", "purchasing, procurement, retail, claims, marketing, advertising"),
    *rules("Business", "public relations, public affairs, equality, race relations"),
    *rules("Business", "inspector, auditor, audit, customer service, operations, investment"),
    *rules("Business", "commercial, business, assistant to, secretary to, aide to"),
)  # fmt: skip

CATEGORY_RULES: tuple[Rule, ...] = (*_CATEGORY_EXCEPTIONS, *_CATEGORY_FIELDS)
"""Word patterns per category, tried in this order (exceptions first; a field's own words
before the generic business words); the first that occurs in the title decides."""

_GENERIC_HEADS = word_set(
    "manager management officer administrator administration consultant analyst adviser advisor "
    "clerk secretary planner coordinator executive dealer"
)
"""Office words that name no field: Business only when no other field is named."""

_BUSINESS_WORDS = word_set(
    "call centre center customer service services facilities housing information intelligence "
    "investment local government civil office product production quality records risk planning "
    "development emergency equality diversity waste recycling distribution logistics regulatory "
    "affairs trading standards town company project programme program operations operational "
    "business account accounts compliance contracts contract procurement purchasing "
    "administrative admin diplomatic public relations strategy strategic personnel human "
    "resources branch area regional district national general senior junior trainee assistant "
    "deputy head chief lead team of and the for in at to a an executive operating"
)
"""Words a title of generic office words may also hold and still be Business alone."""

# --- level ------------------------------------------------------------------------------------

_RANK_HEADS = (
    "manager, director, head, headteacher, professor, principal, dean, secretary, chief, "
    "president, vice president, chairman, chair, commissioner, superintendent, editor, "
    "general counsel, controller, officer, partner"
)
_MODIFIERS = ("assistant", "deputy", "associate", "vice", "under")


def _modified_ranks() -> list[Rule]:
    """ "Assistant manager", "deputy director", "associate dean"...: a rank in doubt."""
    heads = [h.strip() for h in _RANK_HEADS.split(",")]
    return [
        Rule(f"{m} {h}", UNKNOWN)
        for m in _MODIFIERS
        for h in heads
        if (m, h) != ("vice", "president")
    ]


_ORGANISATIONS = (
    "sales marketing finance financial operations programme program project technical "
    "technology engineering it hr commercial regional national country site company "
    "senior group business development product research communications policy "
    "strategy procurement purchasing retail communications fundraising nursing"
)
"""Words before "director" that make it a director of an organisation (Senior Management)."""

LEVEL_RULES: tuple[Rule, ...] = (
    # a rank in doubt: Unknown (military ranks, deputies, chiefs that are not chief officers)
    *rules(UNKNOWN, "chief officer, chief petty officer, chief warrant officer, petty officer"),
    *rules(UNKNOWN, "warrant officer, chief fire officer, chief police officer, chief constable"),
    *rules(UNKNOWN, "sergeant, corporal, lieutenant, colonel, brigadier, admiral, commodore"),
    *rules(UNKNOWN, "ensign, captain, commander, major general, ^ general $, marshal"),
    *rules(UNKNOWN, "general manager, attorney general, surgeon general, secretary general"),
    *rules(UNKNOWN, "general secretary, solicitor general, inspector general, director general"),
    *rules(UNKNOWN, "permanent secretary, cabinet secretary, private secretary"),
    *rules(UNKNOWN, "^ general counsel $, ^ executive $"),
    *rules(UNKNOWN, "press secretary, secretary of, managing partner, executive director"),
    *rules(UNKNOWN, "executive chef, executive producer, executive officer, head office"),
    *rules(UNKNOWN, "head hunter, director of photography, avp, ^ graduate $, secretary to"),
    *_modified_ranks(),
    # exceptions the guide names
    *rules("Senior Management", "chief of staff, vice president, senior vice president"),
    *rules("Senior Management", "executive vice president, vp, evp, svp"),
    *rules("Professional", "company secretary, secretary company, air traffic controller"),
    *rules("Professional", "theatre director, legal executive"),
    *rules("Management", "art director"),
    # ranks, highest first
    *rules("C-Suite", "chief ... officer, chief executive, ceo, cto, cfo, coo, cmo, cio, cso"),
    *rules("C-Suite", "president, chairman, chairwoman, chairperson, managing director"),
    *rules("Senior Management", "^ director, director of, head of, senior manager, ^ partner"),
    *rules("Senior Management", "senior partner, equity partner, partner at, partner in"),
    *rules("Senior Management", "dean, headteacher, head teacher, headmaster, headmistress"),
    *rules("Senior Management", "^ principal $, school principal, college principal"),
    *rules("Senior Management", "principal of"),
    *rules("Senior Management", ", ".join(f"{f} director" for f in _ORGANISATIONS.split())),
    *rules("Management", "manager, supervisor, head, ^ controller $, financial controller"),
    *rules("Management", "finance controller, comptroller, team lead, team leader"),
    *rules("Entry Level", "assistant, junior, trainee, apprentice, intern, internship"),
    *rules("Entry Level", "graduate, fast streamer, clerk, aide, best boy, runner broadcasting"),
    *rules("Entry Level", "receptionist, secretary"),
)  # fmt: skip
"""Rank patterns per position level: every one that occurs counts, a pattern inside a longer
one (or equal to an earlier one) yields to it, and two different levels are Unknown."""

_RANK_DOUBT = word_set(
    "head lead leader principal chief deputy vice associate director commander captain "
    "founder cofounder owner proprietor partner president chair superintendent commissioner "
    "governor minister provost chancellor rector master foreman forewoman boss mayor senator "
    "ambassador controller"
)
"""Words that name a rank the rules do not place: without a placed rank, the level is
Unknown, not Professional."""


@dataclass(frozen=True)
class JobLabels:
    """A title's category and level, with the rule that decided each (None: no rule, the
    label is Unknown)."""

    category: str
    level: str
    category_rule: str | None
    level_rule: str | None


def _current(tokens: list[str]) -> tuple[list[str], str | None]:
    """The tokens of the current job and, where there is none, the rule saying so."""
    now = [i for i, token in enumerate(tokens) if token in _NOW]
    if now:
        tokens = tokens[now[-1] + 1 :]
    for rule in STATUS_RULES:
        if rule.matches(tokens):
            return tokens, f"{rule.label}: {rule.pattern}"
    if "to" in tokens[1:]:
        tokens = tokens[: tokens.index("to", 1) + 1]  # "assistant to the CEO": an assistant
    return tokens, None


def _first(rules: Sequence[Rule], tokens: list[str]) -> Rule | None:
    return next((rule for rule in rules if rule.matches(tokens)), None)


def _generic(tokens: list[str]) -> str | None:
    """Business by office words alone: a generic head and only business words beside it."""
    heads = [t for t in tokens if t in _GENERIC_HEADS]
    if heads and all(t in _GENERIC_HEADS or t in _BUSINESS_WORDS for t in tokens):
        return f"office words only: {heads[-1]}"
    return None


def _part_category(tokens: list[str]) -> tuple[str, str] | None:
    rule = _first(CATEGORY_RULES, tokens)
    if rule is not None:
        return rule.label, rule.pattern
    generic = _generic(tokens)
    return ("Business", generic) if generic else None


_PERSON_ENDINGS = ("er", "or", "ist", "ian", "ant", "ent", "ee", "man", "woman", "ess", "eur")
_PERSON_WORDS = word_set(
    "nurse chef cook surgeon pilot guide coach midwife aide rep ceo cto cfo coo vp evp svp "
    "dean principal chief head lead secretary actuary"
)


def _names_a_person(token: str) -> bool:
    """Whether a part of a title ends in a word for a person ("teacher", "chef"), so that
    it names a job of its own ("Teacher and musician"), not a field ("sport and exercise
    psychologist")."""
    return token in _PERSON_WORDS or token.endswith(_PERSON_ENDINGS)


def _parts(title: str) -> list[list[str]]:
    """The title's parts joined by "and", "&", "+", "/" or ";" (each as tokens)."""
    pieces = re.split(r"\s+(?:and|&|\+)\s+|[/;&+]", title.lower())
    return [tokens for piece in pieces if (tokens := title_tokens(piece))]


def _category(title: str, tokens: list[str]) -> tuple[str, str | None]:
    whole = _part_category(tokens)
    if whole is None:
        return UNKNOWN, None
    label, rule = whole
    if any(rule == r.pattern for r in _CATEGORY_EXCEPTIONS) or " and " in f" {rule} ":
        return label, rule
    fields = {}
    for part in _parts(title):
        found = _part_category(_current(part)[0]) if _names_a_person(part[-1]) else None
        if found is not None and found[0] != UNKNOWN:
            fields.setdefault(found[0], found[1])
    if len(fields) > 1:
        named = ", ".join(f"{field} ({pattern})" for field, pattern in fields.items())
        return UNKNOWN, f"two fields: {named}"
    return label, rule


def _rank_matches(tokens: list[str]) -> list[tuple[Rule, tuple[int, int]]]:
    """Every rank pattern that occurs, less those inside a longer (or earlier, equal) one."""
    found = [(i, rule, span) for i, rule in enumerate(LEVEL_RULES) for span in rule.spans(tokens)]

    def covered(i: int, span: tuple[int, int]) -> bool:
        return any(
            (s[0] <= span[0] and span[1] <= s[1]) and (s != span or j < i)
            for j, _, s in found
            if (j, s) != (i, span)
        )

    return [(rule, span) for i, rule, span in found if not covered(i, span)]


def _level(tokens: list[str], occupation: bool) -> tuple[str, str | None]:
    matches = _rank_matches(tokens)
    levels = dict.fromkeys(rule.label for rule, _ in matches)
    patterns = ", ".join(dict.fromkeys(rule.pattern for rule, _ in matches))
    if len(levels) == 1:
        return next(iter(levels)), patterns
    if len(levels) > 1:
        return UNKNOWN, f"two ranks: {patterns}"
    doubt = [t for t in tokens if t in _RANK_DOUBT]
    doubt += [t for t in tokens[:-1] if t == "executive"]  # "executive chef", not "sales executive"
    if doubt:
        return UNKNOWN, f"a rank the rule does not place: {doubt[0]}"
    if occupation:
        return UNRANKED_LEVEL, "no rank named"
    return UNKNOWN, None


@lru_cache(maxsize=4096)  # a run reads each user's title once per probe (4 ms a reading)
def classify_title(title: str) -> JobLabels:
    """Both labels of a title and the rules that decided them ("Unknown" where in doubt)."""
    tokens, status = _current(title_tokens(title))
    if status is not None:
        return JobLabels(UNKNOWN, UNKNOWN, status, status)
    current = re.split(r"\b(?:now|currently)\b", title, flags=re.IGNORECASE)[-1]
    category, category_rule = _category(current, tokens)
    level, level_rule = _level(tokens, category_rule is not None)
    return JobLabels(category, level, category_rule, level_rule)


def read_title(title: str) -> Reading:
    """The word rule's reading of a title, value {"category", "level"}: "read" when at least
    one label is known (the other may be Unknown), "unreadable" with the reason when neither
    is; `by` names the rules that fired."""
    labels = classify_title(title)
    rules = f"category {labels.category_rule or 'none'}; level {labels.level_rule or 'none'}"
    by = f"{WORD_RULE}: {rules}"
    value = {"category": labels.category, "level": labels.level}
    if labels.category == UNKNOWN and labels.level == UNKNOWN:
        reason = labels.category_rule or "no rule of the word rule matches the title"
        return Reading.unreadable(reason, by)
    unknown = [name for name, label in value.items() if label == UNKNOWN]
    reason = f"{' and '.join(unknown)} unknown" if unknown else None
    return Reading("read", value, reason, by)


def job_category(title: str) -> str:
    return classify_title(title).category


def position_level(title: str) -> str:
    return classify_title(title).level
