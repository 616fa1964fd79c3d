"""Everything that talks to GitHub."""
