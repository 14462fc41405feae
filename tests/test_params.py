import pytest

from arena.errors import ArenaError
from arena.params import Param, parse_assignments, parse_spec, parse_specs, validate_params


def test_agent_list_with_parameters_and_list_values():
    specs = parse_specs("random,greedy:eval=heuristic,minimax:depth=3,eval=linear,weights=0,2,4,-1,0,-2,-4,1,random:seed=3")
    assert [s.id for s in specs] == ["random", "greedy", "minimax", "random"]
    assert specs[2].params == {"depth": "3", "eval": "linear", "weights": "0,2,4,-1,0,-2,-4,1"}
    assert specs[3].params == {"seed": "3"}
    assert str(specs[2]) == "minimax:depth=3,eval=linear,weights=0,2,4,-1,0,-2,-4,1"


def test_game_spec():
    spec = parse_spec("connect_four:rows=6,columns=7,x_in_row=4")
    assert spec.id == "connect_four" and spec.params == {"rows": "6", "columns": "7", "x_in_row": "4"}


@pytest.mark.parametrize("text", ["", "a,,b", ":x=1", "a:b", "rows=3", "a:x=1,x=2"])
def test_bad_specs(text):
    with pytest.raises(ArenaError):
        parse_specs(text)


def test_validation():
    declared = (Param("rows", 6, min=1, max=20), Param("mode", "a", choices=("a", "b")), Param("w", (1.0, 2.0)), Param("flag", False))
    assert validate_params(declared, {"rows": "7", "w": "3,4", "flag": "yes"}, "game 'g'") == {
        "rows": 7, "mode": "a", "w": (3.0, 4.0), "flag": True
    }
    for bad, fragment in [({"rows": "x"}, "expected an integer"), ({"rows": "0"}, ">= 1"), ({"mode": "c"}, "choose one of"),
                          ({"nope": "1"}, "unknown parameter 'nope'"), ({"w": "1,a"}, "list of numbers"), ({"rows": "2.5"}, "integer")]:
        with pytest.raises(ArenaError, match=fragment):
            validate_params(declared, bad, "game 'g'")


def test_assignments():
    assert parse_assignments(["depth=3", "eval = linear"]) == {"depth": "3", "eval": "linear"}
    with pytest.raises(ArenaError):
        parse_assignments(["depth"])
