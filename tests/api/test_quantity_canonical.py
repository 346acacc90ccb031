"""Quantities printed back as Kubernetes prints them (``resource.Quantity.String()``), format kept."""
from __future__ import annotations

from fractions import Fraction

import pytest

from karmactl.api.quantity import canonical_quantity, canonical_string


@pytest.mark.parametrize("written, printed", [
    ("2000m", "2"), ("1500m", "1500m"), ("0.1", "100m"), ("1500", "1500"), ("3000", "3k"), ("1.5k", "1500"),
    ("1G", "1G"), ("1024Mi", "1Gi"), ("1.5Gi", "1536Mi"), ("1023Ki", "1023Ki"), ("512", "512"), ("1e3", "1e3"),
    ("0", "0"), ("1n", "1n"), (3, "3"),
])
def test_written_quantities_print_as_the_api_server_prints_them(written, printed):
    assert canonical_string(written) == printed


def test_sums_keep_the_format_they_are_given():
    assert canonical_quantity(Fraction(2 * 10**9), "BinarySI") == "1953125Ki"  # 2G as a memory sum
    assert canonical_quantity(Fraction(100), "BinarySI") == "100"  # below 1024: DecimalSI
    assert canonical_quantity(Fraction(5, 2), "DecimalSI") == "2500m"
    assert canonical_quantity(Fraction(3000), "DecimalExponent") == "3e3"
