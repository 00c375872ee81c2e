"""The PCIe-style contrast link: LTSSM, data link layer, requester and completer, and the end that
joins them.
"""
