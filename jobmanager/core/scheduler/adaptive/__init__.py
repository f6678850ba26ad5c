"""The adaptive batch scheduler (FLIP-187, FLIP-379): parallelism from the bytes inputs really
produced, balanced input ranges, skew splitting, forward groups, source inference."""
