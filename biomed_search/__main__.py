"""``python -m biomed_search`` = the ``biomed-search`` console script."""

from biomed_search.cli import main

if __name__ == "__main__":
    raise SystemExit(main())
