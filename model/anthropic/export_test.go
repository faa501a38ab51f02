package anthropic

// ToolUseID is toolUseID, for the tests.
var ToolUseID = toolUseID
