"""The one exception type for errors a user can cause (bad paths, specs, datasets, grids).

Its message is a single actionable line. The CLI prints it without a traceback and exits 2;
the app shows it with st.error, at the field's widget where the error names one (FieldError).
"""


class UserError(Exception):
    """An error the user can fix; str(err) is one line that says how."""


class FieldError(UserError):
    """A UserError about one field of a spec, named by `field`: the CLI prints the same line, and a
    form shows it under that field's widget (dashboard/form.py)."""

    def __init__(self, message: str, field: str):
        super().__init__(message)
        self.field = field

    def __reduce__(self):  # unpickled with its field too: Exception's default passes the message alone
        return type(self), (str(self), self.field)
