"""JSON Schema's `hostname` format as the test suite reads it.

`jsonschema` checks `hostname` only with `fqdn` installed, and then neither refuses the
labels RFC 5890 reserves nor checks IDNA A-labels; the official JSON-Schema-Test-Suite
(`optional/format/hostname.json`) reads the format as RFC 1123 section 2.1 with IDNA2008
on top: labels of ASCII letters, digits and inner hyphens, 1 to 63 characters each and at
most 253 in all, no trailing dot, and a label with `--` in its 3rd and 4th characters
valid only as an A-label (`xn--`) that decodes under IDNA2008 with its contextual rules
(`idna`, the package `jsonschema` reads `idn-hostname` with). The judge uses this
checker, so an engine that writes `ab--c.com` or `xn--X` is blamed for it, and a real
A-label such as `xn--9n2bp8q` is valid.
"""

from __future__ import annotations

import re

_LABEL = re.compile(r"[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?", re.ASCII)
MAX_LENGTH = 253


def _label_ok(label: str) -> bool:
    if not _LABEL.fullmatch(label):
        return False
    if label[2:4] != "--":
        return True
    if label[:4].lower() != "xn--":
        return False  # reserved by RFC 5890 for other ACE prefixes
    import idna

    try:
        idna.decode(label)
    except (idna.IDNAError, UnicodeError, ValueError):
        return False
    return True


def is_hostname(instance: object) -> bool:
    """Whether `instance` is a hostname; anything but a string is (formats ignore it)."""
    if not isinstance(instance, str):
        return True
    if not instance or len(instance) > MAX_LENGTH or not instance.isascii():
        return False
    return all(_label_ok(label) for label in instance.split("."))
