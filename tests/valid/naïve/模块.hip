// An empty header with a UTF-8 path, for lexical.iris.
