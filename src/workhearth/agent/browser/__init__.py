"""The agent's browser (issue 25): site policy, the browser session and its tools."""
