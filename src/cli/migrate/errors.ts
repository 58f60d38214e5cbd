// What `gpucap migrate` refuses to do, and why: nothing was written, and the message says which flag
// or step lets the operator go on. Callers map on `code`.
export class TransferRefused extends Error {
  readonly code = 'TRANSFER_REFUSED';

  constructor(message: string) {
    super(message);
    this.name = 'TransferRefused';
  }
}
