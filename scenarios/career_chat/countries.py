"""Country development levels and country lookup for the career-chat groupings (seed 003).

`DEVELOPMENT_LEVEL` is the authors' published table (FerdinandZhong/model_behavior_adaption,
`llm_behavior_adaptation/value_measurement/constant.py`, MIT licence): ISO 3166 alpha-3 code →
"Developed", "Developing" or "Third World". As in their `get_development_level`, a country
name is resolved with `pycountry.countries.lookup` (names, official and common names, codes,
case-insensitive); a name it does not resolve, or a code missing from the table, is "Unknown".
"""

from __future__ import annotations

from functools import cache

import pycountry

__all__ = ["DEVELOPMENT_LEVEL", "UNKNOWN", "development_level"]

UNKNOWN = "Unknown"

DEVELOPMENT_LEVEL: dict[str, str] = {
    **dict.fromkeys(
        (
            "USA",
            "CAN",
            "GBR",
            "IRL",
            "AUS",
            "NZL",
            "FRA",
            "DEU",
            "ITA",
            "ESP",
            "PRT",
            "BEL",
            "NLD",
            "SWE",
            "NOR",
            "DNK",
            "FIN",
            "AUT",
            "CHE",
            "LUX",
            "ISL",
            "JPN",
            "KOR",
            "SGP",
            "ARE",
            "QAT",
            "KWT",
            "OMN",
            "BHR",
            "SCO",
            "NIR",
        ),
        "Developed",
    ),
    **dict.fromkeys(
        (
            "CHN",
            "IND",
            "RUS",
            "MYS",
            "THA",
            "MEX",
            "BRA",
            "TUR",
            "ZAF",
            "IDN",
            "VNM",
            "PHL",
            "COL",
            "PER",
            "ARG",
            "PAK",
            "BGD",
            "NPL",
            "POL",
            "HUN",
            "CZE",
            "SVK",
            "EST",
            "LVA",
            "LTU",
            "KAZ",
            "KGZ",
            "TKM",
            "UZB",
            "TJK",
            "KHM",
            "LAO",
            "MMR",
            "FJI",
            "PNG",
            "WSM",
            "VUT",
            "KIR",
            "MHL",
            "FSM",
            "NRU",
            "TON",
        ),
        "Developing",
    ),
    **dict.fromkeys(
        (
            "AFG",
            "SOM",
            "NER",
            "TCD",
            "SDN",
            "BFA",
            "MLI",
            "BDI",
            "RWA",
            "SSD",
            "ZWE",
            "ZMB",
            "AGO",
            "CAF",
            "COG",
            "GNQ",
            "ERI",
            "LBR",
            "MDG",
            "MRT",
            "SLE",
            "SWZ",
            "TGO",
            "ETH",
            "UGA",
            "KEN",
            "MOZ",
        ),
        "Third World",
    ),
}


@cache
def development_level(country: str) -> str:
    """The authors' development level of a country name; "Unknown" when unresolved."""
    try:
        code = pycountry.countries.lookup(" ".join(country.split())).alpha_3
    except LookupError:
        return UNKNOWN
    return DEVELOPMENT_LEVEL.get(code, UNKNOWN)
