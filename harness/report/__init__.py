"""Reports: a bench run's static offline page `RUN/index.html`, verdict first, with its
CSVs, PNGs and `RUN/specs.html` (`write`), the run summary printed on the console
(`summary_text`, `text_table`), and the pages of `tokensieve diff` and `tokensieve
jumpforward` (`diff_page`, `jumpforward_page`, from the dicts those commands dump as
JSON). Beside them: the asv dashboard made offline (`dashboard_offline`) and the pages
checked in headless Chromium (`browser`).

Contract: a page's every string from data is escaped and every link points at a file of
the run directory (`html`); every CSV is written from one column table, so its header and
rows cannot drift (`columns`, `csvs`); the same run gives the same page, CSVs and plots.

- `html`: the one page shell with the shared stylesheet and table script, the table
  helper, figures, links, `markup` (literal templates filled with escaped values);
- `columns`: column tables and the CSV writer; `csvs`: every CSV's columns;
- `data`: a run read from the store, its per-engine summaries and session totals;
- `studies`: states axis, vocabulary scaling, speedups, MaskBench comparison;
- `plots`: the matplotlib figures;
- `verdict`: which engine to use per corpus set and vocabulary (`verdict.csv`);
- `sections`, `comparisons`, `diff_page`, `jumpforward_page`, `verdict_section`,
  `spec_page` (one spec across engines): one function per section;
- `index`: the bench page; `text`: the console summary;
- `dashboard_offline`: asv's CDN libraries copied from Debian packages after `asv publish`;
- `browser`: headless Chromium through Selenium (console errors, failed requests,
  screenshots), for tests/test_browser.py and `python -m harness.report.browser RUN_DIR`.

Why split: one function per section keeps each section's data, table and prose together
and testable; typed `CellMetrics` access instead of string keys lets a renamed metric fail
loudly instead of reporting a blank.
"""

from harness.report.diff_page import diff_page, diff_section
from harness.report.index import write
from harness.report.jumpforward_page import jumpforward_page, jumpforward_section
from harness.report.text import summary_text, text_table

__all__ = [
    "diff_page",
    "diff_section",
    "jumpforward_page",
    "jumpforward_section",
    "summary_text",
    "text_table",
    "write",
]
