"""Controlled, multi-seed studies of the loop (paper 003 Tables 1, 4, 5 and Figure 6): the grid of cells
(``grid``), statistics with uncertainty (``stats``), and the report read from the cells' own run records
(``report``). Pure: the study flow (flows/study.py) runs each cell as a loop run and calls these."""
