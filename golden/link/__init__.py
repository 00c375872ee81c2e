"""The OAE link endpoint, golden: the four-stage pipeline (core), training, the token plane, the
framer, the failure detector and the control-word checks.
"""
