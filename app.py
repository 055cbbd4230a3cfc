"""Placeholder app until the explorer pages land."""

import streamlit as st

from albert_core import ModelConfig

st.title("ALBERT architecture explorer")
st.write(ModelConfig().label)
