"""vector_param: any numbers in, a list of Python floats out, with a repr that skips the items."""

from __future__ import annotations

import numpy as np

from kg_platform.graph.params import VectorParam, vector_param


def test_vector_param_takes_arrays_lists_and_other_numbers() -> None:
    from_array = vector_param(np.array([1, 2], dtype=np.int64))
    assert isinstance(from_array, VectorParam) and from_array == [1.0, 2.0]
    assert all(type(x) is float for x in from_array)
    assert vector_param([0.5, 1.5]) == [0.5, 1.5]
    from_tuple = vector_param((np.float32(0.5), 2))
    assert from_tuple == [0.5, 2.0] and all(type(x) is float for x in from_tuple)
    assert repr(vector_param([])) == "<vector of 0 floats>"
