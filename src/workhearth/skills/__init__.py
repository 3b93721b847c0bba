"""Skills: folders with SKILL.md and parameterized example tasks (DESIGN §1)."""
