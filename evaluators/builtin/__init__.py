"""Built-in evaluators, one module each; registered through the ``ragfault.evaluators`` entry points."""
