/* model_file.h: what is wrong with a model path, said before libtorch reads it. libtorch's own
 * words for a directory or a text file ("PytorchStreamReader failed reading zip archive: failed
 * finding central directory") name its reader, not the user's mistake. */
#ifndef LP_MODEL_FILE_H
#define LP_MODEL_FILE_H

/* LP_OK for a readable, non-empty file that starts as a zip archive does (TorchScript files and
 * AOTInductor packages both are). Otherwise one reason, each its own:
 *  - LP_ERR_NOT_FOUND: no such file (a usage error: the path is wrong);
 *  - LP_ERR_INVALID: a directory, or something that is no regular file;
 *  - LP_ERR_IO: it cannot be read (permissions);
 *  - LP_ERR_MODEL: it is empty, or it is no zip archive, so no model. */
int lp_model_file_check(const char *path);

#endif
