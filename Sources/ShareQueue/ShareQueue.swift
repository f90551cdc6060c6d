// What an app and its extension import: `import ShareQueue` gives directories,
// appending, draining, typed values and status, and the async forms below.
// The core stays a module of its own so that a producer that needs no typed
// values, such as share-append, links no Foundation.
@_exported import ShareQueueCore
@_exported import ShareQueueCodable
