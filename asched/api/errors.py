"""The one error type for objects the API handed us that we cannot read."""


class DecodeError(ValueError):
    """An API object could not be decoded; names the object and the field path."""

    def __init__(self, kind: str, key: str, field: str, message: str) -> None:
        self.kind = kind
        self.key = key
        self.field = field
        self.message = message
        super().__init__(f"{kind} {key}: {field}: {message}")
