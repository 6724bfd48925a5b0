def slugify(title):
    """Turn a title into a URL slug: lower case, words joined by '-'."""
    return "-".join(title.split())
