"""Amaranth components of the OAE link layer. Imports nothing from golden/ but golden.encoding."""
