"""The app's colours (mpviz/presentation/figures/style.py) for readers with a colour-vision deficiency and for text
drawn on them.

Each dtype colour is simulated as a protanope, a deuteranope and a tritanope sees it (Machado, Oliveira & Fernandes
2009, severity 1: a 3×3 matrix on linear RGB), and every pair must stay apart by CIEDE2000 ΔE in normal vision and
under each simulation. The dtypes that share most figures and the stepper's graph (float64, float32, tf32, and the
two autocast dtypes) must stay further apart than the rest, which meet mostly on the number-formats page. Text on
a dtype colour (the stepper's nodes, the dtype badges) is near-black or white, whichever contrasts more, and must
reach WCAG's 4.5:1; lines and markers drawn in a dtype colour on the white page must reach the 3:1 for graphics.
"""

import itertools

import numpy as np
import pytest

from mpviz.presentation.palette import DTYPE_COLORS, FALLBACK_COLOR, FIELD_COLORS, contrast_ratio, ink, text_color

MACHADO_2009 = {  # severity 1.0, linear RGB → linear RGB
    "protanopia": ((0.152286, 1.052583, -0.204868), (0.114503, 0.786281, 0.099216), (-0.003882, -0.048116, 1.051998)),
    "deuteranopia": ((0.367322, 0.860646, -0.227968), (0.280085, 0.672501, 0.047413), (-0.011820, 0.042940, 0.968881)),
    "tritanopia": ((1.255528, -0.076749, -0.178779), (-0.078411, 0.930809, 0.147602), (0.004733, 0.691367, 0.303900)),
}
VISIONS = ("normal", *MACHADO_2009)
SRGB_TO_XYZ = ((0.4124564, 0.3575761, 0.1804375), (0.2126729, 0.7151522, 0.0721750), (0.0193339, 0.1191920, 0.9503041))
D65 = (0.95047, 1.0, 1.08883)
SHARED = ("float64", "float32", "tf32", "float16", "bfloat16")  # on (almost) every page together
MIN_DE_SHARED = 14.0
MIN_DE_ALL = 7.0  # all fifteen dtypes and the fallback grey, pairwise
MIN_DE_FIELDS = 10.0


def _lab(color: str, vision: str) -> np.ndarray:
    """CIELAB (D65) of a "#rrggbb" colour as a reader with `vision` sees it."""
    srgb = np.array([int(color[k : k + 2], 16) / 255 for k in (1, 3, 5)])
    rgb = np.where(srgb <= 0.04045, srgb / 12.92, ((srgb + 0.055) / 1.055) ** 2.4)
    if vision != "normal":
        rgb = np.clip(np.array(MACHADO_2009[vision]) @ rgb, 0, 1)
    t = np.array(SRGB_TO_XYZ) @ rgb / np.array(D65)
    f = np.where(t > (6 / 29) ** 3, np.cbrt(t), t / (3 * (6 / 29) ** 2) + 4 / 29)
    return np.array([116 * f[1] - 16, 500 * (f[0] - f[1]), 200 * (f[1] - f[2])])


def delta_e_2000(lab1: np.ndarray, lab2: np.ndarray) -> float:
    """CIEDE2000 colour difference (Sharma, Wu & Dalal 2005), kL = kC = kH = 1."""
    (l1, a1, b1), (l2, a2, b2) = lab1, lab2
    c_mean = (np.hypot(a1, b1) + np.hypot(a2, b2)) / 2
    g = 0.5 * (1 - np.sqrt(c_mean**7 / (c_mean**7 + 25**7)))
    a1, a2 = (1 + g) * a1, (1 + g) * a2
    c1, c2 = np.hypot(a1, b1), np.hypot(a2, b2)
    h1, h2 = np.degrees(np.arctan2(b1, a1)) % 360, np.degrees(np.arctan2(b2, a2)) % 360
    dh = 0.0 if c1 * c2 == 0 else (h2 - h1 + 180) % 360 - 180
    d_hue = 2 * np.sqrt(c1 * c2) * np.sin(np.radians(dh / 2))
    l_mean, c_mean = (l1 + l2) / 2, (c1 + c2) / 2
    if c1 * c2 == 0:
        h_mean = h1 + h2
    elif abs(h1 - h2) <= 180:
        h_mean = (h1 + h2) / 2
    else:
        h_mean = (h1 + h2 + 360) / 2 if h1 + h2 < 360 else (h1 + h2 - 360) / 2
    t = (
        1
        - 0.17 * np.cos(np.radians(h_mean - 30))
        + 0.24 * np.cos(np.radians(2 * h_mean))
        + 0.32 * np.cos(np.radians(3 * h_mean + 6))
        - 0.20 * np.cos(np.radians(4 * h_mean - 63))
    )
    s_l = 1 + 0.015 * (l_mean - 50) ** 2 / np.sqrt(20 + (l_mean - 50) ** 2)
    s_c, s_h = 1 + 0.045 * c_mean, 1 + 0.015 * c_mean * t
    r_t = -np.sin(np.radians(60 * np.exp(-(((h_mean - 275) / 25) ** 2)))) * 2 * np.sqrt(c_mean**7 / (c_mean**7 + 25**7))
    dl, dc, dhh = (l2 - l1) / s_l, (c2 - c1) / s_c, d_hue / s_h
    return float(np.sqrt(dl**2 + dc**2 + dhh**2 + r_t * dc * dhh))


def closest_pair(colors: dict[str, str], vision: str) -> tuple[float, str, str]:
    labs = {name: _lab(color, vision) for name, color in colors.items()}
    return min((delta_e_2000(labs[a], labs[b]), a, b) for a, b in itertools.combinations(colors, 2))


def test_delta_e_2000_matches_sharma_2005():
    """Pairs 1, 7 and 17 of Sharma, Wu & Dalal's published test data."""
    for lab1, lab2, expected in (
        ((50.0, 2.6772, -79.7751), (50.0, 0.0, -82.7485), 2.0425),
        ((50.0, 0.0, 0.0), (50.0, -1.0, 2.0), 2.3669),
        ((22.7233, 20.0904, -46.694), (23.0331, 14.973, -42.5619), 2.0373),
    ):
        assert delta_e_2000(np.array(lab1), np.array(lab2)) == pytest.approx(expected, abs=1e-4)


@pytest.mark.parametrize("vision", VISIONS)
def test_dtype_colours_stay_apart_under_every_colour_vision(vision, printout):
    everything = {**DTYPE_COLORS, "fallback": FALLBACK_COLOR}
    shared = {name: DTYPE_COLORS[name] for name in SHARED}
    de_all, a, b = closest_pair(everything, vision)
    de_shared, c, d = closest_pair(shared, vision)
    printout(f"{vision}: min ΔE2000 {de_all:.1f} ({a} ~ {b}); shared dtypes {de_shared:.1f} ({c} ~ {d})")
    assert de_all >= MIN_DE_ALL, (a, b, de_all)
    assert de_shared >= MIN_DE_SHARED, (c, d, de_shared)


@pytest.mark.parametrize("vision", VISIONS)
def test_bit_field_colours_stay_apart_under_every_colour_vision(vision):
    de, a, b = closest_pair(FIELD_COLORS, vision)
    assert de >= MIN_DE_FIELDS, (a, b, de)


@pytest.mark.parametrize("name", [*DTYPE_COLORS, "fallback"])
def test_text_on_a_dtype_colour_and_the_colour_on_the_page_contrast_enough(name):
    color = DTYPE_COLORS.get(name, FALLBACK_COLOR)
    assert contrast_ratio(ink(color), color) >= 4.5, (name, color, ink(color))
    assert contrast_ratio(color, "#ffffff") >= 3.0, (name, color)


@pytest.mark.parametrize("field", FIELD_COLORS)
def test_bit_field_colours_read_as_text_on_white_and_under_white(field):
    """A released bit pill writes its 0 in the field's colour on white; a pressed one writes white on it."""
    assert contrast_ratio(FIELD_COLORS[field], "#ffffff") >= 4.5
    assert ink(FIELD_COLORS[field]) == "#ffffff"


def test_ink_is_whichever_of_near_black_and_white_contrasts_more():
    assert ink("#ffffff") == "#111111" and ink("#000000") == "#ffffff"
    assert contrast_ratio("#000000", "#ffffff") == pytest.approx(21.0)


@pytest.mark.parametrize("name", DTYPE_COLORS)
def test_a_label_in_a_dtype_colour_is_darkened_just_enough_to_read_on_white(name):
    color = DTYPE_COLORS[name]
    label = text_color(color)
    assert contrast_ratio(label, "#ffffff") >= 4.5
    if contrast_ratio(color, "#ffffff") >= 4.5:
        assert label.lower() == color.lower()
