"""The state of one table: one ``int32`` vector. Only the engine's own modules read these offsets;
everything else reads named views (``thirtyone_env.tables.Tables``)."""

MAXP = 10  # most seats at a table
MAXD = 52  # most cards in a deck

# phases: what the seat to act decides
PH_TURN, PH_DISCARD, PH_DISCARD_FIRST, PH_OVER = 0, 1, 2, 3

# how the last deal ended
END_NONE, END_BLITZ, END_SHOWDOWN = 0, 1, 2

# seat status
OUT, IN_PLAY, ON_HONOR = 0, 1, 2

S_HANDS = 0  # MAXP x 4 card ids, -1 = empty slot
S_HAND_N = S_HANDS + MAXP * 4
S_STOCK = S_HAND_N + MAXP  # stock cards, top = S_STOCK + stock_n - 1
S_STOCK_N = S_STOCK + MAXD
S_DISCARD = S_STOCK_N + 1  # discard pile, oldest first, top last
S_DISCARD_N = S_DISCARD + MAXD
S_SEEN = S_DISCARD_N + 1  # per card: has been in the discard pile this deal
S_KNOWN = S_SEEN + MAXD  # per card: 1 + seat that took it from the discard and holds it, else 0
S_CHIPS = S_KNOWN + MAXD  # per seat: lives (lives economy) or chips (pot economy)
S_STATUS = S_CHIPS + MAXP  # per seat: OUT, IN_PLAY, ON_HONOR
S_DEAL_CHIPS = S_STATUS + MAXP  # per seat: chips when the deal began (for deal rewards)
S_NUM_PLAYERS = S_DEAL_CHIPS + MAXP
S_EPISODE_DEAL = S_NUM_PLAYERS + 1  # 1 = an episode is one deal
S_DEALER = S_EPISODE_DEAL + 1
S_CURRENT = S_DEALER + 1
S_PHASE = S_CURRENT + 1
S_TAKEN = S_PHASE + 1  # card taken from the discard pile this turn, -1 = none
S_KNOCKER = S_TAKEN + 1
S_FINAL_LEFT = S_KNOCKER + 1  # turns left in the final round after a knock
S_TURNS = S_FINAL_LEFT + 1  # completed turns this deal
S_DEALS = S_TURNS + 1  # deals begun this match
S_POT = S_DEALS + 1
S_DONE = S_POT + 1
S_LAST_SEAT = S_DONE + 1
S_LAST_ACTION = S_LAST_SEAT + 1
S_LAST_END = S_LAST_ACTION + 1  # END_* of the last settled deal
S_QPOS = S_LAST_END + 1  # next stacked deck to use
S_QLEN = S_QPOS + 1
S_DECISIONS = S_QLEN + 1  # decisions taken this episode
S_THROWN = S_DECISIONS + 1  # per card: bit ``seat`` set if that seat threw it this deal
S_PASSED = S_THROWN + MAXD  # per card: bit ``seat`` set if that seat left it on the discard pile's top this deal
S_MOVED_N = S_PASSED + MAXD  # cards with a bit in S_THROWN or S_PASSED
S_MOVED = S_MOVED_N + 1  # those cards, in the order of their first such move (observations visit only these)
STATE_SIZE = S_MOVED + MAXD
