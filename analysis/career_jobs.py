"""Job category and position level of a job title (seed 003, §5.1, Figure 5 and Appendix H).

The labels are the authors' (FerdinandZhong/model_behavior_adaption, MIT,
`value_measurement/measurement_utils.py`, `JobClassifier.job_categories` and `.position_levels`).
They assigned titles with zero-shot NLI (facebook/bart-large-mnli) and did not release the
assignment (their `job_categories_index.json` / `position_level_index.json` are not in the
repository), and a model download is not something a run may do. So the default here is a
keyword rule of ours into their labels: the first label whose keywords occur in the title wins,
in the order listed; a title matching none is "Other" (category) or "Professional" (level, their
middle rung, where a title that names no rank belongs). A run can instead take each title's
labels from a file (`--job-groups`, e.g. the output of their classifier), logged with the run.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

__all__ = [
    "JOB_CATEGORIES",
    "JOB_CATEGORY_KEYWORDS",
    "OTHER_CATEGORY",
    "POSITION_KEYWORDS",
    "POSITION_LEVELS",
    "UNRANKED_LEVEL",
    "job_category",
    "position_level",
]

JOB_CATEGORIES = ("Health", "Science", "Creative", "Education", "Business", "Tech", "Hospitality")
"""The authors' job categories, in their order."""

POSITION_LEVELS = ("Entry Level", "Professional", "Management", "Senior Management", "C-Suite")
"""The authors' position levels, lowest first."""

OTHER_CATEGORY = "Other"
UNRANKED_LEVEL = "Professional"

JOB_CATEGORY_KEYWORDS: dict[str, tuple[str, ...]] = {
    "Health": (
        "nurse", "doctor", "physician", "surgeon", "therapist", "therapeutic", "pharmac",
        "medical", "health", "clinical", "dentist", "dental", "optician", "optometrist",
        "radiograph", "midwife", "paramedic", "psychiatr", "psycholog", "haematolog", "patholog",
        "nutrition", "dietitian", "physio", "chiropod", "podiatr", "osteopath", "audiolog",
        "orthoptist", "counsell", "care ", "hospital", "veterinar", "biomedical", "sonograph",
        "perfusionist", "prosthetist", "immunolog", "cytolog", "embryolog", "phlebotom",
        "ambulance", "anaesth", "dispensing", "neurolog", "diagnostic", "homeopath",
        "ophthalmolog", "oncolog", "herbal", "acupunct", "hygienist", "ergonom",
    ),
    "Education": (
        "teacher", "lecturer", "professor", "education", "tutor", "school", "academic",
        "librarian", "teaching", "trainer", "learning", "careers", "lexicograph",
    ),
    "Hospitality": (
        "chef", "cook", "restaurant", "hotel", "catering", "caterer", "bar ", "barista",
        "waiter", "tourism", "tour ", "travel", "leisure", "event", "housekeep", "holiday",
        "fitness", "sports", "recreation", "brewing", "wine", "hospitality", "theme park",
        "tourist", "conference", "cabin crew",
    ),
    "Science": (
        "scientist", "research", "chemist", "physicist", "biolog", "geolog", "geophysic",
        "ecolog", "genetic", "geneticist", "botan", "zoolog", "astronom", "meteorolog",
        "oceanograph", "hydrolog", "laboratory", "geoscientist", "seismic", "toxicolog",
        "biochem", "pharmacolog", "soil", "geochemist", "glaciolog", "volcanolog",
        "conservation", "environmental", "horticultur", "agricultur", "forest",
        "archaeolog", "mineral", "scientific", "statistician", "mathematic", "metallurg",
        "hydrograph", "surveyor", "geodesist", "field trials", "plant breeder", "herpetolog",
        "arboricult", "seismolog", "mudlogger", "cartograph",
    ),
    "Creative": (
        "designer", "design", "artist", "art ", "arts", "editor", "writer", "author",
        "journalist", "photograph", "film", "video", "music", "actor", "animator", "illustrat",
        "producer", "broadcast", "presenter", "media", "copywriter", "publishing", "curator",
        "museum", "gallery", "theatre", "dancer", "sound", "camera", "fashion", "games",
        "translator", "interpreter", "architect", "exhibition", "printmaker", "jeweller",
        "ceramics", "glass", "make-up", "costume", "choreograph", "magazine", "press",
        "radio", "television", "stage", "special effects", "best boy", "location manager",
        "heritage", "conservator", "landscape", "archivist", "proofreader", "bookseller",
        "copy",
    ),
    "Tech": (
        "engineer", "developer", "software", "programmer", "data", " it ", "network", "systems",
        "computer", "web", "technolog", "electronics", "telecommunications", "database",
        "cyber", "applications", "technical", "technician", "information", "ict", "digital",
        "materials", "automation", "robotic", "energy", "nuclear", "petroleum", "drilling",
        "mechanical", "electrical", "aeronautical", "mining", "quarry", "manufactur",
    ),
    "Business": (
        "manager", "accountant", "accounting", "account", "finance", "financial", "banker",
        "bank", "sales", "marketing", "business", "consultant", "tax", "insurance", "audit",
        "broker", "trader", "economist", "buyer", "purchasing", "retail", "administrator",
        "secretary", "lawyer", "solicitor", "barrister", "legal", "attorney", "advertising",
        "public relations", "human resources", "recruitment", "estate", "actuary", "investment",
        "risk", "chartered", "procurement", "logistics", "fundraiser", "charity", "officer",
        "chief", "director", "executive", "analyst", "advice", "adviser", "advisor", "civil",
        "government", "politic", "policy", "personnel", "clerk", "merchandiser", "underwriter",
        "loss adjuster", "claims", "company", "commercial", "trade", "customs", "import",
        "export", "planner", "planning", "valuer", "auctioneer", "union", "diplomatic",
        "immigration", "police", "prison", "probation", "lobbyist", "ombudsman", "agent",
        "operations", "operational", "administration", "comptroller", "conveyancer",
        "treasurer", "freight", "dealer", "patent",
    ),
}  # fmt: skip
"""Keywords of ours per category (lower case, matched inside " title "), tried in this order."""

POSITION_KEYWORDS: dict[str, tuple[str, ...]] = {
    "C-Suite": ("chief", "ceo", "cto", "cfo", "coo", "cmo", "president", "chairman"),
    "Senior Management": ("director", "head of", "senior manager", "vice", "partner"),
    "Management": ("manager", "supervisor", "lead", "head ", "principal", "controller"),
    "Entry Level": (
        "assistant", "junior", "trainee", "apprentice", "intern", "graduate", "fast streamer",
        "clerk", "aide", "best boy", "runner", "receptionist",
    ),
}  # fmt: skip
"""Keywords of ours per rank above or below "Professional", highest rank tried first."""


def _first_match(title: str, keywords: Mapping[str, Sequence[str]]) -> str | None:
    text = f" {' '.join(title.lower().split())} "
    for label, words in keywords.items():
        if any(word in text for word in words):
            return label
    return None


def job_category(
    title: str, keywords: Mapping[str, Sequence[str]] = JOB_CATEGORY_KEYWORDS
) -> str:
    return _first_match(title, keywords) or OTHER_CATEGORY


def position_level(title: str, keywords: Mapping[str, Sequence[str]] = POSITION_KEYWORDS) -> str:
    return _first_match(title, keywords) or UNRANKED_LEVEL
