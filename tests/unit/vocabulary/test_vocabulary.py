"""The vocabulary: each word is its wire token, read back as the same member, and shown in its words."""

import json
import pickle

import pytest

from dpgui.vocabulary import (AUTO, CDF_NOISES, HIERARCHY_NOISES, Charge, HierarchyConsistency, Name, Neighbours,
                              Noise, PriorSource, choices)


@pytest.mark.parametrize("member", [*Noise, *Neighbours, *PriorSource, *HierarchyConsistency])
def test_a_word_is_its_token_in_files_and_messages_and_reads_back_as_the_same_member(member: Name) -> None:
    token = member.value
    assert member == token and str(member) == token and f"{member}" == token and repr(member) == repr(token)
    assert json.loads(json.dumps({"w": member}))["w"] == token
    assert type(member)(token) is member
    assert pickle.loads(pickle.dumps(member)) is member


def test_display_words_are_apart_from_tokens() -> None:
    assert Noise.GAUSSIAN.words == "Gaussian" and Noise.GAUSSIAN == "gaussian"
    assert PriorSource.FILE.words == "the prior's counts" and PriorSource.FILE == "prior file"
    assert HierarchyConsistency.GLS.words == "gls"  # no display words given: the token


def test_the_noises_of_each_statistic_and_the_command_lines_choices() -> None:
    assert CDF_NOISES == (Noise.LAPLACE, Noise.GAUSSIAN)
    assert set(HIERARCHY_NOISES) == set(Noise)
    assert choices(AUTO, *CDF_NOISES) == ("auto", "laplace", "gaussian")
    assert [noise.is_zcdp for noise in Noise] == [False, True, False]


@pytest.mark.parametrize(("epsilon", "delta", "rho"), [(0.0, 0.0, None), (-1.0, 0.0, None), (float("nan"), 0.0, None),
                                                       (1.0, 1.0, None), (1.0, -1e-9, None), (1.0, 1e-6, 0.0),
                                                       (1.0, 1e-6, float("inf"))])
def test_a_charge_refuses_what_no_release_can_cost(epsilon: float, delta: float, rho: float | None) -> None:
    with pytest.raises(ValueError, match="charge"):
        Charge(epsilon, delta, rho)


def test_a_charge_holds_epsilon_delta_and_rho() -> None:
    charge = Charge(0.5, 1e-9, 0.01)
    assert (charge.epsilon, charge.delta, charge.rho) == (0.5, 1e-9, 0.01)
    assert Charge(1.0).rho is None and Charge(1.0).delta == 0.0
