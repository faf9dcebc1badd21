package iggy

import "context"

// StreamEnsurer is what EnsureStream needs of an API.
type StreamEnsurer interface {
	GetStream(ctx context.Context, stream Identifier) (*Stream, error)
	CreateStream(ctx context.Context, name string) (*Stream, error)
}

// EnsureStream creates the stream called name unless it exists, and reports whether it did.
// It looks first, so that an account that may read streams but not create them succeeds when
// the stream is there; another client creating the stream at the same time is no error. A
// refusal keeps its code (Unauthorized when the account may not create streams).
func EnsureStream(ctx context.Context, api StreamEnsurer, name string) (created bool, err error) {
	_, err = api.GetStream(ctx, Name(name))
	if err == nil {
		return false, nil
	}
	if !IsCode(err, CodeStreamIDNotFound, CodeStreamNameNotFound) {
		return false, err
	}
	if _, err := api.CreateStream(ctx, name); err != nil {
		if IsCode(err, CodeStreamNameAlreadyExists) {
			return false, nil
		}
		return false, err
	}
	return true, nil
}
