"""The PCIe-style contrast link, golden: LTSSM, data link layer, requester and completer, and the end
that joins them.
"""
