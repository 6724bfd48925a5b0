# Placeholder: this file's content was not recorded in the demonstration.
