def mean(values):
    """Arithmetic mean; an empty sequence should give 0.0."""
    return sum(values) / len(values)
