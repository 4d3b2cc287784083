export default { mark: async () => 'marked' };
