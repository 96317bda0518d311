# The two README commands: `make serve` and `make test`.
.PHONY: setup serve test lint
setup:
	bash scripts/setup.sh
serve: setup
	.venv/bin/biomed-search serve
test: setup
	bash scripts/test.sh
lint: setup
	.venv/bin/ruff check .
