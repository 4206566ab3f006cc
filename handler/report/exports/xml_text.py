"""XML text and attribute values, written as `xml.sax.saxutils` writes them, with saxutils imported
when a value is first written: it imports `urllib.request` (and with it http.client, ssl and
email), which a run that exports nothing to XML never needs at start-up."""

from __future__ import annotations


def escape(text: str) -> str:
    """`&`, `<` and `>` escaped, for XML text."""
    from xml.sax.saxutils import escape as sax_escape

    return sax_escape(text)


def quoteattr(text: str) -> str:
    """An attribute value, escaped and quoted."""
    from xml.sax.saxutils import quoteattr as sax_quoteattr

    return sax_quoteattr(text)
