package facts

// IngressKinds are the kinds a runtime accepts posted from outside it
// (harness.Runtime.Post): a person's message, answers, policy, bounds,
// plan mode and budget.
var IngressKinds = []Kind{
	KindUserMessage,
	KindConfirmationAnswered,
	KindQuestionAnswered,
	KindEffectReconciled,
	KindPolicySet,
	KindContextBoundsSet,
	KindPlanModeSet,
	KindBudgetSet,
	KindBudgetRaised,
}
