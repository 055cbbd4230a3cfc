"""The Quality vs cost page: its script (page.py, run by st.navigation in app.py) and its figure builders."""
