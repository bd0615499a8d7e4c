"""Secrets in model specs and URLs: found, masked, refused.

Model specs and endpoint URLs are recorded (manifests, `run.started`, every `llm.call`) and
printed (errors, summaries), so they must never carry a key. A key written where a spec or a URL
is read (`http://user:KEY@host/v1`, `?api_key=KEY`, a langchain option `api_key=KEY`) is refused
with a message that shows the spec masked (`http://***@host/v1`); keys belong in environment
variables (`OPENAI_API_KEY`, or an endpoint's `key_env`). `mask_secrets` is the one masking
function: whatever shows a spec or a URL passes it through first.
"""

from __future__ import annotations

import re
from urllib.parse import unquote

__all__ = ["KEY_HINT", "find_secrets", "is_secret_name", "mask_secrets"]

MASK = "***"
KEY_HINT = (
    "put the key in an environment variable instead (OPENAI_API_KEY for openai: models, an "
    "endpoint's key_env in an endpoints file, the variable a LangChain class reads); see "
    "docs/security.md"
)
"""Where a refused key goes, for the end of a refusal."""

_SECRET_WORDS = frozenset(
    {
        "key", "apikey", "token", "accesstoken", "secret", "password", "passwd", "pwd",
        "credential", "credentials", "sig", "signature", "auth", "authorization", "bearer",
    }
)  # fmt: skip
"""A name holding one of these words (`api_key`, `x-api-key`, `access_token`, `clientSecret`)
names a secret; `max_tokens` does not (its word is `tokens`)."""
_SECRET_ENDINGS = ("apikey", "accesskey", "privatekey", "secretkey", "token", "secret", "password")
"""A name run together ending so (`openaiapikey`, `accesstoken`) names one too."""

_USERINFO = re.compile(r"(?P<scheme>[A-Za-z][A-Za-z0-9+.-]*://)(?P<userinfo>[^/?#\s]*)@")
_OPTION = re.compile(r"(?P<lead>[?&;:,])(?P<name>[A-Za-z0-9_.%-]+)=(?P<value>[^&;,#\s]*)")
_KEY_LIKE = re.compile(
    r"\b(?:Bearer\s+[A-Za-z0-9._~+/=-]{8,}|sk-[A-Za-z0-9_-]{16,}|hf_[A-Za-z0-9]{16,})"
)
"""Values that are keys whatever they are called: a bearer token, OpenAI/Anthropic and
Hugging Face key formats."""
_WORD = re.compile(r"[A-Z]?[a-z0-9]+|[A-Z]+(?![a-z])")


def is_secret_name(name: str) -> bool:
    """Whether an option or query parameter named `name` holds a secret (`api_key`, `apikey`,
    `key`, `token`, `access_token`, `secret`, `password`, `X-Amz-Signature`...)."""
    name = unquote(name)
    words = {word.lower() for word in _WORD.findall(name)}
    joined = re.sub(r"[^a-z0-9]", "", name.lower())
    return (
        bool(words & _SECRET_WORDS) or joined in _SECRET_WORDS or joined.endswith(_SECRET_ENDINGS)
    )


def find_secrets(text: str) -> list[str]:
    """What in `text` (a spec, a URL) looks like a secret, described without its value:
    `the URL's user:password`, `api_key=`, `a key-like value`. Empty when none."""
    found: list[str] = []
    for match in _USERINFO.finditer(text):
        if match.group("userinfo"):
            found.append("user:password in the URL")
    for match in _OPTION.finditer(text):
        if is_secret_name(match.group("name")) and match.group("value"):
            found.append(f"{unquote(match.group('name'))}=")
    rest = _OPTION.sub(_masked_option, _USERINFO.sub(_masked_userinfo, text))
    if _KEY_LIKE.search(rest) or _KEY_LIKE.search(unquote(rest)):
        found.append("a value that looks like a key")
    return list(dict.fromkeys(found))


def mask_secrets(text: str) -> str:
    """`text` with every secret replaced by `***`: a URL's user info
    (`http://user:KEY@host/v1` → `http://***@host/v1`), the value of an option or query
    parameter named like a key (`?api_key=***`) and key-like values (`sk-…`, `Bearer …`)."""
    if not _KEY_LIKE.search(text) and _KEY_LIKE.search(unquote(text)):
        text = unquote(text)  # a percent-encoded key (`Bearer%20…`) is shown decoded, masked
    text = _USERINFO.sub(_masked_userinfo, text)
    text = _OPTION.sub(_masked_option, text)
    return _KEY_LIKE.sub(MASK, text)


def _masked_userinfo(match: re.Match[str]) -> str:
    if not match.group("userinfo"):
        return match.group(0)
    return f"{match.group('scheme')}{MASK}@"


def _masked_option(match: re.Match[str]) -> str:
    if not is_secret_name(match.group("name")) or not match.group("value"):
        return match.group(0)
    return f"{match.group('lead')}{match.group('name')}={MASK}"
