"""The documented limits of the contract (contract/README.md); every server enforces the same numbers."""

# Largest accepted request body (REST) or message (gRPC): 4 MiB.
MAX_BODY_BYTES = 4 * 1024 * 1024

MAX_PASSWORD_BYTES = 1024

MAX_STRING_BYTES = 256
MIN_CAR_YEAR = 1886
MAX_CAR_YEAR = 2100
MAX_MILEAGE = 10_000_000

MIN_NTIMES = 1
MAX_NTIMES = 1000
MAX_BOARD_CELLS = 10_000
MAX_COORDINATE = 1_000_000_000
# A step fails once the population grows past this, which bounds its cost.
MAX_POPULATION = 50_000

# The most records one download may ask for.
MAX_DOWNLOAD = 100_000
# A streamed upload (NDJSON): its longest line, without the newline (the body limit: exactly that many pass), and
# the whole upload (after gzip is undone, when it was sent gzipped).
MAX_LINE_BYTES = MAX_BODY_BYTES
MAX_UPLOAD_BYTES = 64 * 1024 * 1024
