"""The rules engine: RULES.md sections 2-5 as numba kernels over plain arrays, by concern.

| module | holds |
|---|---|
| ``layout`` | the int32 state vector of one table (``S_*`` offsets), phases, seat status |
| ``rng`` | the game RNG (xorshift128), the same on every platform and thread count |
| ``hands`` | hand values and blitzes (section 2), public for agents' kernels |
| ``table`` | small readers and writers of one table: hands, seats in play, the piles |
| ``deal`` | a new match and a new deal: antes, dealing, a dealt blitz (sections 3.1-3.2) |
| ``turn`` | legal moves, a move, the end of a turn, knocking (sections 3.1, 3.3-3.6) |
| ``settle`` | payments, going out or on honor, the end of a match (section 4) |
| ``observe`` | observations (layout: ``thirtyone_env.encoding``) and the full state |
| ``drivers`` | loops over many tables, parallel and serial from one definition |
| ``tables`` | ``Tables``: the Python layer that validates and offers named views |

Follow ``env.step``: ``raw_env.step`` -> ``Tables.step_at`` -> ``drivers._step_table`` ->
``turn._step``. Kernels with a leading underscore trust their inputs; ``Tables`` validates
before calling them. Set ``NUMBA_DISABLE_JIT=1`` to step through the rules as plain Python.
"""

from thirtyone_env.engine.hands import hand_value, is_blitz
from thirtyone_env.engine.layout import IN_PLAY, MAXD, MAXP, ON_HONOR, OUT
from thirtyone_env.engine.rng import seed_rng
from thirtyone_env.engine.tables import EPISODES, ILLEGAL_ACTIONS, Tables

__all__ = ["EPISODES", "ILLEGAL_ACTIONS", "IN_PLAY", "MAXD", "MAXP", "ON_HONOR", "OUT", "Tables", "hand_value",
           "is_blitz", "seed_rng"]
