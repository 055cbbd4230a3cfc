"""The app's colours, each written once: BERT blue and ALBERT orange on every page and chart."""

from __future__ import annotations

BERT = "#1f77b4"
ALBERT = "#ff7f0e"
FAMILY_COLORS = {"BERT": BERT, "ALBERT": ALBERT}
GOOD, BAD = "#1a7f37", "#cf222e"  # a change for the better (fewer params / FLOPs / bytes) and for the worse
# several configs of one family side by side (Compare's pins): shades that stay apart, the family colour first
SHADES = {
    "BERT": (BERT, "#08306b", "#6baed6", "#2171b5", "#9ecae1", "#4292c6", "#c6dbef", "#084594"),
    "ALBERT": (ALBERT, "#a63603", "#fdae6b", "#e6550d", "#fdd0a2", "#d94801", "#7f2704", "#fd8d3c"),
}


def family_shades(families: list[str]) -> list[str]:
    """One colour per entry of ``families`` ("BERT" / "ALBERT"): its family's colour, then further shades of
    it for the second, third ... config of the same family."""
    seen: dict[str, int] = {}
    out = []
    for fam in families:
        shades = SHADES.get(fam.upper(), SHADES["ALBERT"])
        i = seen.get(fam.upper(), 0)
        seen[fam.upper()] = i + 1
        out.append(shades[i % len(shades)])
    return out
