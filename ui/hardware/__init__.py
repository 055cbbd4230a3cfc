"""The hardware page: its script (page.py, run by st.navigation in app.py) and what only it uses."""
