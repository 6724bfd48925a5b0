def reverse_words(sentence):
    """Return the words of sentence in reverse order."""
    return sentence[::-1]


def shout(text):
    return text.upper() + "!"
