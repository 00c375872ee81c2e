"""The OAE link endpoint: the four-stage pipeline (core) composed of training, token plane, framer,
failure detector and control-word checks, and the clock-crossing endpoints with their user ports.
"""
