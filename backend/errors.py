"""The one exception type for errors a user can cause (bad paths, specs, datasets, grids).

Its message is a single actionable line. The CLI prints it without a traceback and exits 2;
the app shows it with st.error.
"""


class UserError(Exception):
    """An error the user can fix; str(err) is one line that says how."""
