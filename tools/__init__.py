"""The project's tools (site build, notebook runs and checks, checkpoint shipping); run from the repository root as
`python -m tools.<name>`. Not part of the installed package."""
