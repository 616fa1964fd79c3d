"""One round."""
