"""Every page's session keys carry its own prefix (issue 49): each ``ui/<page>/state.py`` names a ``PREFIX`` no
other page shares and lists its ``KEYS``, each beginning with it; ui/common's keys are the page's (derived from
its keys) or the whole app's (``app_``). The rule the page tests apply (:mod:`tests.state_keys`) is checked here by
hand, so that it cannot pass everything."""

from __future__ import annotations

import importlib

import pytest

from tests.state_keys import prefix_of, the_pages
from tests.test_layout_ui import PAGE_PACKAGES
from ui.common import state as common

STATES = {p: importlib.import_module(f"ui.{p}.state") for p in PAGE_PACKAGES}
PREFIXES = {"stepper": "sp_", "lesson": "ls_", "explanation": "ex_", "beam": "bx_", "alignment": "al_",
            "paired": "pr_", "timeline": "wl_", "bottleneck": "bn_", "compare": "cmp_", "length": "lq_"}


@pytest.mark.parametrize("package", PAGE_PACKAGES)
def test_each_page_lists_its_keys_under_its_own_prefix(package: str) -> None:
    state = STATES[package]
    assert state.PREFIX == PREFIXES[package] and state.KEYS
    assert [k for k in state.KEYS if not k.startswith(state.PREFIX)] == []
    assert prefix_of(state.KEYS) == state.PREFIX


def test_no_two_pages_and_not_the_app_share_a_prefix() -> None:
    prefixes = [s.PREFIX for s in STATES.values()] + [common.PREFIX]
    assert len(set(prefixes)) == len(prefixes) == len(PAGE_PACKAGES) + 1
    assert all(k.startswith(common.PREFIX) for k in common.KEYS)


def test_a_key_is_the_pages_when_listed_made_for_it_or_derived_from_one_of_its_keys() -> None:
    keys = ["al_model", "al_go", "al_dl_*"]
    for key in ("al_model", "al_dl_3", "al_model_by_hand", "al_model_typed_to", "al_go_done", "al_why_alt",
                "al_why_dl_2"):
        assert the_pages(key, keys, "al_"), key
    for key in ("al_other", "al_other_done", "_al_go_done", "bn_model_by_hand", "al_model_done_x", "why_alt",
                "al_dl", "bn_why_alt"):
        assert not the_pages(key, keys, "al_"), key
