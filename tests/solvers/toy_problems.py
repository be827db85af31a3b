"""Eight hand-written problems shared by the solver tests (no /work/shared data)."""
from mwp.problem import build_problem

TOY = [
    ("t1", "Tom has 3 apples and buys 5 more . How many apples does he have ?", "x=3+5", 8),
    ("t2", "A box holds 4 pens . How many pens are in 6 boxes ?", "x=4*6", 24),
    ("t3", "Ann had 9 cards and gave away 2 . How many cards are left ?", "x=9-2", 7),
    ("t4", "12 cookies are shared by 3 kids . How many cookies does each kid get ?", "x=12/3", 4),
    ("t5", "Sam reads 7 pages a day for 2 days and then 4 more pages . How many pages did he read ?", "x=7*2+4", 18),
    ("t6", "A shop sold 10 cakes and 6 pies and then 3 tarts were returned . How many items are sold ?", "x=10+6-3", 13),
    ("t7", "Each of 5 rows has 8 seats . 2 seats are broken . How many seats work ?", "x=5*8-2", 38),
    ("t8", "Lily saves 20 dollars and spends half of it . How much does she keep ?", "x=20/2", 10),
]


def toy_problems():
    return [build_problem(pid, text, eq, ans, source="toy", language="en") for pid, text, eq, ans in TOY]
